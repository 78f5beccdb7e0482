-- ARGV[3] max messages, ARGV[4] visibility ms, ARGV[5] nonce (unique per call), ARGV[6] max
-- receive count (0: no redrive), ARGV[7] dead-letter channel, ARGV[8] dead-letter key TTL.
-- KEYS[8..14], with a redrive policy, are the dead-letter mailbox's keys (same hash slot).
-- Returns {now, earliest due or -1, then per message: id, body, enqueuedAt, deliveryCount, token, attrs}.
promote(K)
local max = tonumber(ARGV[3])
local due = NOW + tonumber(ARGV[4])
local nonce = ARGV[5]
local max_receives = tonumber(ARGV[6])
local before = earliest(K)
local out = {NOW, before or -1}
local n = 0

local function dead_letter(id, enqueued)
  local D = keys_at(8)
  promote(D)
  local moved = format_id(new_id(D, 1) + 1)
  redis.call('HSET', D.body, moved, redis.call('HGET', K.body, id))
  redis.call('HSET', D.meta, moved, enqueued .. '|0')
  local attrs = redis.call('HGET', K.attr, id)
  if attrs then redis.call('HSET', D.attr, moved, attrs) end
  redis.call('RPUSH', D.ready, moved)
  redis.call('HDEL', K.body, id)
  redis.call('HDEL', K.meta, id)
  redis.call('HDEL', K.attr, id)
  redis.call('HDEL', K.tok, id)
  redis.call('PUBLISH', ARGV[7], 'r1')
  touch(D, tonumber(ARGV[8]))
end

while n < max do
  local id = redis.call('LPOP', K.ready)
  if not id then break end
  local meta = redis.call('HGET', K.meta, id)
  local enqueued, count = NOW, 0
  if meta then
    local sep = string.find(meta, '|', 1, true)
    enqueued = string.sub(meta, 1, sep - 1)
    count = tonumber(string.sub(meta, sep + 1))
  end
  if max_receives > 0 and count >= max_receives then
    dead_letter(id, enqueued)
  else
    count = count + 1
    n = n + 1
    local token = nonce .. '-' .. n
    redis.call('HSET', K.meta, id, enqueued .. '|' .. count)
    redis.call('HSET', K.tok, id, token)
    redis.call('ZADD', K.timed, due, id)
    local body = redis.call('HGET', K.body, id)
    local attrs = redis.call('HGET', K.attr, id) or ''
    out[#out + 1] = id
    out[#out + 1] = body
    out[#out + 1] = tonumber(enqueued)
    out[#out + 1] = count
    out[#out + 1] = token
    out[#out + 1] = attrs
  end
end
if n > 0 then
  announce_due(CHANNEL, due, before)
  if before == nil or due < before then out[2] = due end
end
touch(K, TTL)
return out

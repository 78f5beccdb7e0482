-- ARGV[3] the lowest and ARGV[4] the highest fencing epoch of the call (0 and 0: not fenced), ARGV[5]
-- max messages, ARGV[6] visibility ms, ARGV[7] nonce (unique per call), ARGV[8] max receive count (0:
-- no redrive), ARGV[9] dead-letter channel, ARGV[10] dead-letter key TTL, ARGV[11..] pairs of (id,
-- token) to acknowledge before receiving, as ack.lua does. KEYS[8..14], with a redrive policy, are the
-- dead-letter mailbox's keys (same hash slot). Returns {now, earliest due or -1, {one acknowledge code
-- per pair}, then per message: id, body, enqueuedAt, deliveryCount, token, attrs}.
local refused = fence(ARGV[3], ARGV[4])
if refused then return refused end
local settled = acknowledge_pairs(11)
local before = promote(K)
local max = tonumber(ARGV[5])
local due = NOW + tonumber(ARGV[6])
local nonce = ARGV[7]
local max_receives = tonumber(ARGV[8])
local out = {NOW, before or -1, settled}
local n = 0

local function dead_letter(id, body, enqueued, flag)
  local D = keys_at(8)
  promote(D)
  local moved = format_id(new_id(D, 1) + 1)
  redis.call('HSET', D.body, moved, body)
  redis.call('HSET', D.meta, moved, format_meta(enqueued, 0, flag, '', ''))
  if flag == 'a' then redis.call('HSET', D.attr, moved, redis.call('HGET', K.attr, id)) end
  redis.call('RPUSH', D.ready, moved)
  delete(K, id, flag)
  redis.call('PUBLISH', ARGV[9], 'r1')
  touch(D, tonumber(ARGV[10]))
end

while n < max do
  local id = redis.call('LPOP', K.ready)
  if not id then break end
  local body = redis.call('HGET', K.body, id)
  local meta = redis.call('HGET', K.meta, id)
  local enqueued, count, flag = NOW, 0, '-'
  if meta then enqueued, count, flag = parse_meta(meta) end
  if not body then
    -- The message behind this id is gone. Only an acknowledgement that should have been refused leaves
    -- one: a handle that lapsed and was requeued, taken for current because the server's clock stepped
    -- back (a failover to a replica whose clock is behind). Delivering it would hand out a message with
    -- no body, again at every visibility timeout; drop what is left of it instead.
    delete(K, id, 'a')
  elseif max_receives > 0 and count >= max_receives then
    dead_letter(id, body, enqueued, flag)
  else
    count = count + 1
    n = n + 1
    local token = nonce .. '-' .. n
    redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, due, token))
    redis.call('ZADD', K.timed, due, id)
    out[#out + 1] = id
    out[#out + 1] = body
    out[#out + 1] = tonumber(enqueued)
    out[#out + 1] = count
    out[#out + 1] = token
    out[#out + 1] = flag == 'a' and redis.call('HGET', K.attr, id) or ''
  end
end
if n > 0 then
  announce_due(CHANNEL, due, before)
  if before == nil or due < before then out[2] = due end
end
touch(K, TTL)
return out

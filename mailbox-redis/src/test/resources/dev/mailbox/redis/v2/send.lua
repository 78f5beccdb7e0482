-- ARGV[3] delay ms, ARGV[4] capacity (0 none), ARGV[5] attributes ('' none), ARGV[6] deduplication
-- window ms (0: the send has no deduplication id), ARGV[7..] bodies. With a window, KEYS[8..] hold
-- one deduplication key per body: a body whose key exists is not stored, and its id is the one the
-- key holds; the others are stored and their keys set to their new ids, expiring after the window.
-- Returns the ids, or -n if the mailbox has no room for the n new messages (nothing stored).
local before = promote(K)
local delay = tonumber(ARGV[3])
local capacity = tonumber(ARGV[4])
local attrs = ARGV[5]
local window = tonumber(ARGV[6])
local n = #ARGV - 6
local ids = {}
local fresh = n
if window > 0 then
  for i = 1, n do
    local seen = redis.call('GET', KEYS[7 + i])
    if seen then
      ids[i] = seen
      fresh = fresh - 1
    end
  end
end
if fresh == 0 then
  touch(K, TTL)
  return ids
end
if capacity > 0 and redis.call('LLEN', K.ready) + redis.call('ZCARD', K.timed) + fresh > capacity then
  touch(K, TTL) -- promote() above may have created the ready list
  return -fresh
end
local first = new_id(K, fresh)
local meta = format_meta(NOW, 0, attrs ~= '' and 'a' or '-', '', '')
local j = 0
for i = 1, n do
  if not ids[i] then
    j = j + 1
    local id = format_id(first + j)
    redis.call('HSET', K.body, id, ARGV[6 + i])
    redis.call('HSET', K.meta, id, meta)
    if attrs ~= '' then redis.call('HSET', K.attr, id, attrs) end
    if delay > 0 then
      redis.call('ZADD', K.timed, NOW + delay, id)
    else
      redis.call('RPUSH', K.ready, id)
    end
    if window > 0 then redis.call('SET', KEYS[7 + i], id, 'NX', 'PX', window) end
    ids[i] = id
  end
end
if delay > 0 then
  announce_due(CHANNEL, NOW + delay, before)
else
  redis.call('PUBLISH', CHANNEL, 'r' .. fresh)
end
touch(K, TTL)
return ids

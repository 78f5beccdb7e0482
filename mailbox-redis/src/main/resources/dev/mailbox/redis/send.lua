-- ARGV[3] delay ms, ARGV[4] capacity (0 none), ARGV[5] attributes ('' none), ARGV[6..] bodies.
-- Returns the new ids, or -1 if the mailbox is full (nothing stored).
local before = promote(K)
local delay = tonumber(ARGV[3])
local capacity = tonumber(ARGV[4])
local attrs = ARGV[5]
local n = #ARGV - 5
if capacity > 0 and redis.call('LLEN', K.ready) + redis.call('ZCARD', K.timed) + n > capacity then
  return -1
end
local first = new_id(K, n)
local meta = format_meta(NOW, 0, attrs ~= '' and 'a' or '-', '', '')
local ids = {}
for i = 1, n do
  local id = format_id(first + i)
  redis.call('HSET', K.body, id, ARGV[5 + i])
  redis.call('HSET', K.meta, id, meta)
  if attrs ~= '' then redis.call('HSET', K.attr, id, attrs) end
  if delay > 0 then
    redis.call('ZADD', K.timed, NOW + delay, id)
  else
    redis.call('RPUSH', K.ready, id)
  end
  ids[i] = id
end
if delay > 0 then
  announce_due(CHANNEL, NOW + delay, before)
else
  redis.call('PUBLISH', CHANNEL, 'r' .. n)
end
touch(K, TTL)
return ids

-- ARGV[3] fencing epoch (0: not fenced), ARGV[4] id, ARGV[5] token, ARGV[6] visibility ms from now
-- (0: visible at once).
local refused = fence(ARGV[3], ARGV[3])
if refused then return refused end
local id = ARGV[4]
local code, enqueued, count, flag = check(id, ARGV[5])
if code ~= 1 then return code end
local timeout = tonumber(ARGV[6])
redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, '', '')) -- no current delivery
if timeout == 0 then
  redis.call('ZREM', K.timed, id)
  promote(K) -- what became visible earlier stays ahead of this message
  redis.call('RPUSH', K.ready, id)
  redis.call('PUBLISH', CHANNEL, 'r1')
else
  local before = earliest(K)
  redis.call('ZADD', K.timed, NOW + timeout, id)
  announce_due(CHANNEL, NOW + timeout, before)
end
touch(K, TTL)
return 1

-- ARGV[3] fencing epoch (0: not fenced), ARGV[4] id, ARGV[5] token, ARGV[6] visibility ms from now
-- (0: visible at once).
local refused = fence(ARGV[3], ARGV[3])
if refused then return refused end
local id = ARGV[4]
local code, enqueued, count, flag, rest = check(id, ARGV[5])
if code ~= 1 then return code end
local timeout = tonumber(ARGV[6])
--#if FIFO
-- back at the head of its group (gq orders the group by id); with a timeout the group waits for it
local g = group_of(rest) or ''
redis.call('ZREM', K.timed, id)
redis.call('ZADD', K.gq, 0, g .. ' ' .. id)
if timeout == 0 then
  redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, '', '') .. rest)
else
  local wake = NOW + timeout
  redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, wake, '') .. rest)
  local before = earliest(K)
  redis.call('ZADD', K.timed, wake, id)
  announce_due(CHANNEL, wake, before)
end
-- with nothing else of the group in flight, queue it, unless its head is this message, waiting
if redis.call('HINCRBY', K.gstate, g, -1) <= 0 then
  local head = redis.call('ZRANGEBYLEX', K.gq, '(' .. g .. ' ', '(' .. g .. '!', 'LIMIT', 0, 1)[1]
  if timeout > 0 and head == g .. ' ' .. id then
    redis.call('HDEL', K.gstate, g) -- promote_fifo() queues it when the timeout ends
  else
    redis.call('HSET', K.gstate, g, 'q')
    redis.call('RPUSH', K.gready, g)
    redis.call('PUBLISH', CHANNEL, 'r1')
  end
end
--#else
redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, '', '') .. rest) -- no current delivery
local tenant = (flag == 'g' or flag == 'G') and string.match(rest, '^|[^|]*|(.*)$') or nil
if tenant then -- its delivery leaves timed and its tenant's count
  redis.call('ZREM', K.timed, id .. ' ' .. tenant)
  if redis.call('HINCRBY', K.tflight, tenant, -1) <= 0 then redis.call('HDEL', K.tflight, tenant) end
end
if timeout == 0 then
  if not tenant then redis.call('ZREM', K.timed, id) end
  promote(K) -- what became visible earlier stays ahead of this message
  redis.call('RPUSH', K.ready, id)
  redis.call('PUBLISH', CHANNEL, 'r1')
else
  local before = earliest(K)
  redis.call('ZADD', K.timed, NOW + timeout, id)
  announce_due(CHANNEL, NOW + timeout, before)
end
--#end
touch(K, TTL)
return 1

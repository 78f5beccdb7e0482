-- ARGV[3] fencing epoch (0: not fenced), ARGV[4] id, ARGV[5] token, ARGV[6] visibility ms from now.
local refused = fence(ARGV[3], ARGV[3])
if refused then return refused end
local id = ARGV[4]
local code, enqueued, count, flag = check(id, ARGV[5])
if code ~= 1 then return code end
local before = earliest(K)
local due = NOW + tonumber(ARGV[6])
redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, due, ARGV[5]))
redis.call('ZADD', K.timed, due, id)
announce_due(CHANNEL, due, before)
touch(K, TTL)
return 1

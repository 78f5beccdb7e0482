-- ARGV[3] id, ARGV[4] token, ARGV[5] visibility ms from now.
local id = ARGV[3]
local code, enqueued, count, flag = check(id, ARGV[4])
if code ~= 1 then return code end
local before = earliest(K)
local due = NOW + tonumber(ARGV[5])
redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, due, ARGV[4]))
redis.call('ZADD', K.timed, due, id)
announce_due(CHANNEL, due, before)
touch(K, TTL)
return 1

-- ARGV[3..] pairs of (id, token). Returns one code per pair (see check()); 1 means deleted.
local codes = {}
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  local code = check(id, ARGV[i + 1])
  if code == 1 then
    redis.call('ZREM', K.timed, id)
    redis.call('HDEL', K.body, id)
    redis.call('HDEL', K.meta, id)
    redis.call('HDEL', K.attr, id)
    redis.call('HDEL', K.tok, id)
  end
  codes[#codes + 1] = code
end
touch(K, TTL)
return codes

-- ARGV[3..] pairs of (id, token). Returns one code per pair (see check()); 1 means deleted.
local codes = {}
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  local code, _, _, flag = check(id, ARGV[i + 1])
  if code == 1 then
    redis.call('ZREM', K.timed, id)
    delete(K, id, flag)
  end
  codes[#codes + 1] = code
end
touch(K, TTL)
return codes

-- ARGV[3] the lowest and ARGV[4] the highest fencing epoch of the call (0 and 0: not fenced),
-- ARGV[5..] pairs of (id, token). Returns one code per pair (see check()); 1 means deleted.
local refused = fence(ARGV[3], ARGV[4])
if refused then return refused end
local codes = acknowledge_pairs(5)
--#if FIFO
if K.queued > 0 then redis.call('PUBLISH', CHANNEL, 'r' .. K.queued) end
--#end
touch(K, TTL)
return codes

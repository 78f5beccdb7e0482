-- Deletes every message; the id counter stays so ids are never reused. Returns how many.
local n = redis.call('LLEN', K.ready) + redis.call('ZCARD', K.timed)
redis.call('DEL', K.ready, K.timed, K.body, K.meta, K.attr)
return n

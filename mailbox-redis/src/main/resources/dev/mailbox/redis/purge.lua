-- Deletes every message, and with them the groups' (FIFO) or the tenants' state; the id counter, the
-- fence, the deduplication ids and the mailbox's kind stay, so ids are never reused. Returns how many.
local n = redis.call('HLEN', K.meta)
--#if FIFO
redis.call('DEL', K.ready, K.timed, K.body, K.meta, K.attr, K.gq, K.gready, K.gstate)
--#else
redis.call('DEL', K.ready, K.timed, K.body, K.meta, K.attr, K.tflight, K.tparked)
--#end
return n

-- Deletes every message, and with them the groups' and tenants' state; the id counter, the fence,
-- the deduplication ids and the mailbox's kind stay, so ids are never reused. Returns how many.
local n = redis.call('HLEN', K.meta)
redis.call('DEL', K.ready, K.timed, K.body, K.meta, K.attr, named(K, 'gq'), named(K, 'gready'), named(K, 'gstate'),
        named(K, 'tflight'), named(K, 'tparked'))
return n

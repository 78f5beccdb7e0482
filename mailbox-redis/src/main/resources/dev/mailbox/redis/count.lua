-- Every message not deleted: queued, delayed, set aside and in flight, FIFO or not: each has a meta.
-- One script for both kinds, since it reads nothing else.
return redis.call('HLEN', K.meta)

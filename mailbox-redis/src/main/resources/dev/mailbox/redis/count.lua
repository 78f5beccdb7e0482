-- Every message not deleted: queued, delayed, set aside and in flight, FIFO or not: each has a meta.
return redis.call('HLEN', K.meta)

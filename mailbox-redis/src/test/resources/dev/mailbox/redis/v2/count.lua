-- Every message not deleted: queued, delayed and in flight. One script so the two reads are atomic.
return redis.call('LLEN', K.ready) + redis.call('ZCARD', K.timed)

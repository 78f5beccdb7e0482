-- Whether the mailbox is FIFO or standard, asked once by each mailbox object before its first call
-- (RedisMailbox.ensureKind). KEYS[8] is the kind key, ARGV[3] the kind the object was built as. A
-- mailbox without the key takes that kind if it holds no message, else the kind its messages show (a
-- FIFO mailbox's are in gq or gstate; a version 1 or 2 mailbox is standard), and keeps it from then on
-- (expiring with a key TTL: a later object sets it again). Returns the kind.
local kind = redis.call('GET', KEYS[8])
if not kind then
  kind = ARGV[3]
  if redis.call('HLEN', K.meta) > 0 then
    local fifo = redis.call('EXISTS', named(K, 'gq')) == 1 or redis.call('EXISTS', named(K, 'gstate')) == 1
    kind = fifo and 'fifo' or 'standard'
  end
  if TTL > 0 then
    redis.call('SET', KEYS[8], kind, 'PX', TTL)
  else
    redis.call('SET', KEYS[8], kind)
  end
end
return kind

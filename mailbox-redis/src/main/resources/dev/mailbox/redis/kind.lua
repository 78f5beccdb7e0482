-- Whether the mailbox is FIFO or standard, asked once by each mailbox object before its first call
-- (RedisMailbox.ensureKind), with keys of its own: KEYS[1] meta, KEYS[2] the kind key, KEYS[3] gq,
-- KEYS[4] gstate (the prelude's K is not used). ARGV[3] is the kind the object was built as. A mailbox
-- without the key takes that kind if it holds no message, else the kind its messages show (a FIFO
-- mailbox's are in gq or gstate; a version 1 or 2 mailbox is standard), and keeps it from then on
-- (expiring with a key TTL: a later object sets it again). Returns the kind.
local kind = redis.call('GET', KEYS[2])
if not kind then
  kind = ARGV[3]
  if redis.call('HLEN', KEYS[1]) > 0 then
    local fifo = redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[4]) == 1
    kind = fifo and 'fifo' or 'standard'
  end
  if TTL > 0 then
    redis.call('SET', KEYS[2], kind, 'PX', TTL)
  else
    redis.call('SET', KEYS[2], kind)
  end
end
return kind

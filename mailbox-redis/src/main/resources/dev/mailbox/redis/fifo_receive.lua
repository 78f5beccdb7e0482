-- A FIFO mailbox's receive. ARGV as in receive.lua; KEYS[N + 1..2N], with a redrive policy, are the
-- dead-letter mailbox's keys (a FIFO mailbox, same hash slot). Takes groups from gready in turn and
-- from each the run of its messages from the head that can be delivered, until max: no group with a
-- message in flight is in gready, so no later message of a group is delivered while an earlier one is
-- out. A head that has used up its receives is dead-lettered on the way, which unblocks its group; a
-- head waiting out a nack timeout holds its group, which leaves gready until the timeout ends.
-- Returns {now, earliest due or -1, {one acknowledge code per pair}, then per message: id, body,
-- enqueuedAt, deliveryCount, token, attrs, then one list: per message its group and the id it had
-- before it was dead-lettered into this mailbox ('' if none)}.
local refused = fence(ARGV[3], ARGV[4])
if refused then return refused end
local settled = acknowledge_pairs(11)
local before = promote_fifo(K)
local max = tonumber(ARGV[5])
local due = NOW + tonumber(ARGV[6])
local nonce = ARGV[7]
local max_receives = tonumber(ARGV[8])
local out = {NOW, before or -1, settled}
local groups = {}
local n = 0

-- Moves a head to the dead-letter mailbox, at the end of its group there, keeping its first id.
local function dead_letter(id, body, enqueued, flag, g, original)
  local D = keys_at(N + 1)
  promote_fifo(D)
  local moved = format_id(new_id(D, 1) + 1)
  redis.call('HSET', D.body, moved, body)
  redis.call('HSET', D.meta, moved, format_meta(enqueued, 0, flag, '', '') .. '|'
          .. (original ~= '' and original or id) .. '|' .. g)
  if flag == 'G' then redis.call('HSET', D.attr, moved, redis.call('HGET', K.attr, id)) end
  redis.call('ZADD', D.gq, 0, g .. ' ' .. moved)
  if redis.call('HSETNX', D.gstate, g, 'q') == 1 then
    redis.call('RPUSH', D.gready, g)
    D.queued = D.queued + 1
  end
  if D.queued > 0 then redis.call('PUBLISH', ARGV[9], 'r' .. D.queued) end
  delete(K, id, flag)
  touch(D, tonumber(ARGV[10]))
end

while n < max do
  local g = redis.call('LPOP', K.gready)
  if not g then break end
  local taken = 0
  local held = false -- the group's head waits out a nack timeout
  local low, high = '(' .. g .. ' ', '(' .. g .. '!'
  repeat
    local want = max - n
    local run = redis.call('ZRANGEBYLEX', K.gq, low, high, 'LIMIT', 0, want)
    local done = 0 -- how many of run left the group (delivered, dead-lettered or dropped)
    for _, member in ipairs(run) do
      local id = string.sub(member, #g + 2)
      local m = redis.call('HGET', K.meta, id)
      local body
      if m then
        local enqueued, count, flag, wait, token, rest = parse_meta(m)
        if token == '' and wait ~= nil and wait > NOW then
          held = true
          break
        end
        body = redis.call('HGET', K.body, id)
        local _, original = group_of(rest)
        if not body then
          delete(K, id, flag) -- half a message (see receive.lua): drop what is left
        elseif max_receives > 0 and count >= max_receives then
          dead_letter(id, body, enqueued, flag, g, original)
        else
          count = count + 1
          n = n + 1
          taken = taken + 1
          local delivery = nonce .. '-' .. n
          redis.call('HSET', K.meta, id, format_meta(enqueued, count, flag, due, delivery) .. rest)
          redis.call('ZADD', K.timed, due, id)
          out[#out + 1] = id
          out[#out + 1] = body
          out[#out + 1] = tonumber(enqueued)
          out[#out + 1] = count
          out[#out + 1] = delivery
          out[#out + 1] = flag == 'G' and redis.call('HGET', K.attr, id) or ''
          groups[#groups + 1] = g
          groups[#groups + 1] = original
        end
      else
        delete(K, id, 'G') -- a member without its message: drop it
      end
      done = done + 1
      if n == max then break end
    end
    if done > 0 then
      redis.call('ZREMRANGEBYLEX', K.gq, '[' .. run[1], '[' .. run[done])
    end
  until held or n == max or #run < want
  if taken > 0 then
    redis.call('HSET', K.gstate, g, taken)
  else
    redis.call('HDEL', K.gstate, g) -- empty, or its head waits: promote_fifo() queues it again
  end
end
if n > 0 then
  announce_due(CHANNEL, due, before)
  if before == nil or due < before then out[2] = due end
end
-- groups that acknowledgements or lapses made ready and this call did not take: wake other receivers
if K.queued > 0 then
  local left = redis.call('LLEN', K.gready)
  if left > 0 then redis.call('PUBLISH', CHANNEL, 'r' .. math.min(left, K.queued)) end
end
out[#out + 1] = groups
touch(K, TTL)
return out

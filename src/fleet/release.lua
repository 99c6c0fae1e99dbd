-- Release this node's lease on close. ARGV: 1 node, 2 seq, 3 used (lease units the node admitted
-- that no valid refresh has covered yet), 4 known id, 5 seen id, 6 seen epoch, 7 seen version,
-- 8 seen age ms (-1: none), 9 ttl_ms, 10 floor_used (what it used of a static floor),
-- 11 known version, 12 an id for a new epoch, 13 max_split_ms.
-- The unused part returns to the pool at once; the used part, and what it used of its static
-- floor (whose slot another node may take now), stay charged until settled. The node is
-- remembered, so that a renewal still in flight cannot bring it back.
local node, seq, used, known_id = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local seen_id, seen_epoch, seen_version, seen_age = ARGV[5], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local ttl_ms, floor_used = tonumber(ARGV[9]), tonumber(ARGV[10])
local known_version, new_id, max_split_ms = tonumber(ARGV[11]), ARGV[12], tonumber(ARGV[13])
local server_id, replicas = server()
local s = read_state(max_split_ms)
if not s then
  return { '', '0', '', '0', '0', '0', '0', '0', '0', '0', tostring(replicas), '0', tostring(max_split_ms) }
end
local loss = false
if s.server ~= server_id then
  -- A failover or a restart, as a renewal tells it: this copy may lack renewals the old server
  -- took (each moved its holder's deadline), so a new epoch begins, held, and the caller's
  -- report, made of the old epoch, sweeps nothing here.
  new_epoch(s, new_id, known_version)
  s.server, loss = server_id, true
end
sweep(s, seen_id, seen_epoch, seen_version, seen_age)
local mine = s.leases[node]
if mine and seq > mine.seq and known_id == s.id then
  charge(s, math.min(mine.grant, math.max(used, 0)), mine.slot * math.max(floor_used, 0))
  s.leases[node] = nil
  drop(s, 'n:' .. node)
  bury(s, node, seq)
end
bound_charges(s)
save(s, ttl_ms)
return reply(s, replicas, loss, {})

-- Release this node's lease on close. ARGV: 1 node, 2 seq, 3 used (grant units the node admitted
-- that no valid refresh has covered yet), 4 lease_ms, 5 known id, 6 clock_to (-1: none), 7 ttl_ms.
-- The unused part returns to the pool at once; the used part stays charged until settled. The
-- node is remembered for a lease, so that a renewal still in flight cannot bring it back.
local node, seq, used, lease_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local known_id, clock_to, ttl_ms = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
local server_id, replicas = server()
local s = read_state()
if not s then return { '', '0', '', '0', '0', '0', '0', '0', '0', tostring(replicas), '0' } end
advance(s, known_id, clock_to)
sweep(s)
local mine = s.leases[node]
if mine and seq > mine.seq then
  charge(s, math.min(mine.grant, math.max(used, 0)))
  s.leases[node] = nil
  drop(s, 'n:' .. node)
  s.gone[node] = { expires = s.clock + lease_ms, seq = seq }
  put(s, 't:' .. node, num(s.clock + lease_ms) .. '|' .. seq)
end
bound_charges(s)
save(s, ttl_ms)
return reply(s, replicas, false, {})

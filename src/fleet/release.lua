-- Release this node's lease on close. ARGV: node, used (grant units the node admitted that no
-- valid refresh has covered yet), ttl_ms. The unused part returns to the pool at once; the used
-- part stays charged until a valid refresh sent after now settles it.
local node, used, ttl_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
local fleet = read_fleet()
if not fleet then return { num(now), '', '0', '0', '0', '0', '0' } end
local leases = read_leases()
sweep(fleet, leases, now)
local mine = leases[node]
if mine then
  charge(fleet, now, node, math.min(mine.grant, math.max(used, 0)))
  redis.call('HDEL', leases_key, node)
  leases[node] = nil
end
save(fleet, ttl_ms)
return reply(fleet, now, leases, {})

-- A valid refresh was sent at Redis time >= cutoff (the node maps its send time to a lower bound
-- of the server's clock, so a script that runs late never clears more). ARGV: cutoff_ms,
-- lease_ms, known fleet id, known version, id for a new fleet, reserve, max_nodes, ttl_ms.
-- Charges made up to the cutoff are verified and leave; a hold that ended by the cutoff is over.
local cutoff, lease_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local known_id, known_version, new_id = ARGV[3], tonumber(ARGV[4]), ARGV[5]
local reserve, max_nodes, ttl_ms = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local now = now_ms()
local fleet = open_fleet(now, lease_ms, new_id, reserve, max_nodes)
detect_loss(fleet, now, lease_ms, known_id, known_version)
local leases = read_leases()
sweep(fleet, leases, now)
local settled_units = 0
for _, member in ipairs(redis.call('ZRANGEBYSCORE', charges_key, '-inf', cutoff)) do
  local p = split(member)
  settled_units = settled_units + tonumber(p[2])
end
redis.call('ZREMRANGEBYSCORE', charges_key, '-inf', cutoff)
fleet.charged = math.max(fleet.charged - settled_units, 0)
if redis.call('ZCARD', charges_key) == 0 then fleet.charged = 0 end
if fleet.hold_until <= cutoff then fleet.settled = 1 end
save(fleet, ttl_ms)
return reply(fleet, now, leases, {})

-- Shared by every fleet script. KEYS[1] the fleet record (hash), KEYS[2] the live leases
-- (hash: node id -> "grant|expires_ms|want|b|seq"), KEYS[3] the charges waiting to be settled
-- (sorted set: score = the Redis time they were charged at, member = "id|units").
-- Every key shares the hash tag {spend-sentinel:<name>}, so the scripts run on Redis Cluster.
-- The invariant every script keeps: sum of live grants + charged units <= the pool.
-- Times are the server's (TIME), never a node's.

local fleet_key, leases_key, charges_key = KEYS[1], KEYS[2], KEYS[3]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function num(x) return string.format('%.17g', x) end

local function split(s)
  local out = {}
  for part in string.gmatch(s, '[^|]+') do out[#out + 1] = part end
  return out
end

local function read_fleet()
  local flat = redis.call('HGETALL', fleet_key)
  if #flat == 0 then return nil end
  local f = {}
  for i = 1, #flat, 2 do f[flat[i]] = flat[i + 1] end
  return {
    id = f.id, version = tonumber(f.version), hold_until = tonumber(f.hold_until),
    settled = tonumber(f.settled), reserve = tonumber(f.reserve),
    max_nodes = tonumber(f.max_nodes), charged = tonumber(f.charged), seq = tonumber(f.seq or '0'),
  }
end

-- A missing record is a fresh fleet or lost state: either way, no grant grows until every lease
-- granted before now has lapsed (lease + 2 s) and a valid refresh sent after that has settled.
local function open_fleet(now, lease_ms, new_id, reserve, max_nodes)
  local fleet = read_fleet()
  if fleet then return fleet, false end
  redis.call('DEL', leases_key, charges_key)
  return {
    id = new_id, version = 0, hold_until = now + lease_ms + 2000, settled = 0,
    reserve = reserve, max_nodes = max_nodes, charged = 0, seq = 0,
  }, true
end

-- A node that saw another fleet id, or a newer version than Redis has, is looking at a Redis that
-- lost writes (restart without persistence, failover, deleted keys): hold growth again.
local function detect_loss(fleet, now, lease_ms, known_id, known_version)
  if known_id ~= '' and (known_id ~= fleet.id or fleet.version < known_version) then
    fleet.hold_until = math.max(fleet.hold_until, now + lease_ms + 2000)
    fleet.settled = 0
    return true
  end
  return false
end

local function read_leases()
  local flat = redis.call('HGETALL', leases_key)
  local leases = {}
  for i = 1, #flat, 2 do
    local p = split(flat[i + 1])
    leases[flat[i]] = {
      grant = tonumber(p[1]), expires = tonumber(p[2]), want = tonumber(p[3]),
      b = tonumber(p[4]), seq = tonumber(p[5]),
    }
  end
  return leases
end

local function charge(fleet, at, node, units)
  if units > 0 then
    fleet.seq = fleet.seq + 1
    redis.call('ZADD', charges_key, at, node .. ':' .. fleet.seq .. '|' .. num(units))
    fleet.charged = fleet.charged + units
  end
end

-- An expired lease is not returned to the pool: its whole grant may have been spent, so it stays
-- charged (at its expiry time) until a valid refresh sent after that settles it.
local function sweep(fleet, leases, now)
  for node, lease in pairs(leases) do
    if lease.expires <= now then
      charge(fleet, lease.expires, node, lease.grant)
      redis.call('HDEL', leases_key, node)
      leases[node] = nil
    end
  end
end

local function save(fleet, ttl_ms)
  fleet.version = fleet.version + 1
  redis.call('HSET', fleet_key, 'id', fleet.id, 'version', fleet.version,
    'hold_until', fleet.hold_until, 'settled', fleet.settled, 'reserve', num(fleet.reserve),
    'max_nodes', fleet.max_nodes, 'charged', num(math.max(fleet.charged, 0)), 'seq', fleet.seq)
  -- Expiry written by the same script as the state: an idle fleet's keys vanish together, which
  -- the next call treats like lost state (safe).
  redis.call('PEXPIRE', fleet_key, ttl_ms)
  redis.call('PEXPIRE', leases_key, ttl_ms)
  redis.call('PEXPIRE', charges_key, ttl_ms)
end

local function count(leases)
  local n = 0
  for _ in pairs(leases) do n = n + 1 end
  return n
end

-- The reply every script ends with (numbers as strings: Lua numbers would be truncated).
local function reply(fleet, now, leases, extra)
  local out = {
    num(now), fleet.id, tostring(fleet.version), num(fleet.hold_until), tostring(fleet.settled),
    tostring(count(leases)), num(math.max(fleet.charged, 0)),
  }
  for _, v in ipairs(extra) do out[#out + 1] = v end
  return out
end

//! [`FleetNode`] on a fake clock: every decision of the lease task, with scripted answers.

use std::time::Duration;

use super::node::Applied;
use super::reply::Grant;
use super::request::Known;
use super::*;
use crate::rules::budget::lease::{example_shape, lease_deadline, FleetShape, Lease};

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// b = 200, r = 20, 4 nodes, reserve 0.25 (floor 12.5, pool 150), 30 s leases.
fn shape() -> FleetShape {
    example_shape()
}

fn reply() -> FleetReply {
    super::reply::example_reply()
}

fn grant(units: f64, target: f64) -> Grant {
    Grant {
        grant_units: units,
        target_units: target,
        stale: false,
        slot: true,
        ended: false,
    }
}

fn local(lease: Option<Lease>, used: f64, valid: Option<f64>) -> Local {
    Local {
        lease,
        used_beyond_floor: used,
        floor_used: 0.0,
        last_valid_sent: valid.map(secs),
    }
}

/// A node that renewed at `at` and was answered 10 ms later with `answer` and `granted`; the
/// lease it now uses.
fn renewed(
    node: &mut FleetNode,
    at: f64,
    held: Option<Lease>,
    answer: &FleetReply,
    granted: Grant,
) -> (RenewRequest, Applied) {
    let (request, _) = node.renewal(secs(at), &local(held, 0.0, None));
    let applied = node.apply_renewal(&request, answer, &granted, secs(at + 0.01), 0.5);
    (request, applied)
}

#[test]
fn the_first_renewal_is_due_at_once_and_knows_nothing() {
    let mut node = FleetNode::new(shape());
    let empty = local(None, 0.0, None);
    assert_eq!(node.renewal_due_at(secs(3.0), &empty), secs(3.0));
    let (request, cap) = node.renewal(secs(3.0), &empty);
    assert_eq!(cap, None);
    assert_eq!(
        (
            request.seq,
            request.keep,
            request.acked_seq,
            request.seen.clone()
        ),
        (1, 0.0, 0, None)
    );
    assert_eq!(request.known, Known::default());
    assert_eq!((request.settle_through, request.end_hold), (0, None));
}

#[test]
fn a_grant_lives_from_the_send_and_the_next_renewal_comes_a_third_of_a_lease_later() {
    let mut node = FleetNode::new(shape());
    let (_, applied) = renewed(&mut node, 10.0, None, &reply(), grant(40.0, 40.0));
    let lease = applied.lease.unwrap();
    assert_eq!(lease.grant_units, 40.0);
    assert_eq!(
        lease.deadline,
        secs(10.0 + 29.1 - 1.0),
        "send + lease × 0.97 − 1 s"
    );
    assert_eq!(applied.confirm, None, "no replicas: nothing to wait for");
    let held = local(Some(lease), 0.0, None);
    assert_eq!(
        node.renewal_due_at(secs(11.0), &held),
        secs(20.0),
        "u = 0.5: exactly lease / 3"
    );
    let (request, _) = node.renewal(secs(20.0), &held);
    assert_eq!(
        (request.seq, request.acked_seq, request.known.version),
        (2, 1, 1)
    );
}

#[test]
fn renewals_jitter_by_ten_percent() {
    let mut node = FleetNode::new(shape());
    let (request, _) = node.renewal(secs(0.0), &local(None, 0.0, None));
    let applied = node.apply_renewal(&request, &reply(), &grant(40.0, 40.0), secs(0.1), 0.0);
    let held = local(applied.lease, 0.0, None);
    assert_eq!(node.renewal_due_at(secs(1.0), &held), secs(9.0));
    let applied = node.apply_renewal(&request, &reply(), &grant(40.0, 40.0), secs(0.1), 1.0);
    assert_eq!(
        node.renewal_due_at(secs(1.0), &local(applied.lease, 0.0, None)),
        secs(11.0)
    );
}

#[test]
fn keep_is_the_grant_lowered_towards_the_share_but_never_below_what_was_used() {
    let mut node = FleetNode::new(shape());
    let (_, applied) = renewed(&mut node, 0.0, None, &reply(), grant(100.0, 50.0));
    let lease = applied.lease;
    let (request, cap) = node.renewal(secs(10.0), &local(lease, 30.0, None));
    assert_eq!(request.keep, 50.0);
    assert_eq!(request.held_units, 100.0);
    assert_eq!(
        cap.unwrap().grant_units,
        50.0,
        "capped at keep while in flight"
    );
    let (request, _) = node.renewal(secs(20.0), &local(lease, 80.0, None));
    assert_eq!(request.keep, 80.0, "what the ledger used stays reserved");
    let (request, cap) = node.renewal(secs(40.0), &local(lease, 80.0, None));
    assert_eq!(
        (request.keep, cap),
        (80.0, None),
        "a lapsed grant's used units stay reserved: Redis may not have charged them yet"
    );
    let (request, _) = node.renewal(secs(50.0), &local(lease, 0.0, None));
    assert_eq!(
        request.keep, 0.0,
        "a lapsed grant, nothing used: nothing kept"
    );
}

#[test]
fn growth_on_a_primary_with_replicas_waits_for_them() {
    let mut node = FleetNode::new(shape());
    let (_, first) = renewed(&mut node, 0.0, None, &reply(), grant(40.0, 40.0));
    let replicated = FleetReply {
        replicas: 2,
        ..reply()
    };
    let (request, applied) = renewed(&mut node, 10.0, first.lease, &replicated, grant(75.0, 75.0));
    let confirm = applied.confirm.unwrap();
    assert_eq!(
        applied.lease.unwrap().grant_units,
        40.0,
        "the previous grant, under the renewed deadline"
    );
    assert_eq!(
        applied.lease.unwrap().deadline,
        lease_deadline(request.sent_at, shape().lease)
    );
    assert_eq!((confirm.replicas, confirm.grown.grant_units), (2, 75.0));
    assert_eq!(
        node.confirmed(&confirm, 1),
        None,
        "one replica of two is not enough"
    );
    assert_eq!(node.confirmed(&confirm, 2), Some(confirm.grown));
    // Shrinking needs no confirmation.
    let held = Some(confirm.grown);
    let (_, applied) = renewed(&mut node, 20.0, held, &replicated, grant(50.0, 50.0));
    assert_eq!(
        (applied.lease.unwrap().grant_units, applied.confirm),
        (50.0, None)
    );
}

#[test]
fn a_stale_answer_changes_no_lease_and_acknowledges_nothing() {
    let mut node = FleetNode::new(shape());
    let (_, first) = renewed(&mut node, 0.0, None, &reply(), grant(40.0, 40.0));
    let stale = Grant {
        stale: true,
        ..grant(40.0, 40.0)
    };
    let (_, applied) = renewed(&mut node, 10.0, first.lease, &reply(), stale);
    assert_eq!(applied.lease, None);
    let (request, _) = node.renewal(secs(20.0), &local(first.lease, 0.0, None));
    assert_eq!(request.acked_seq, 1, "still the first renewal's");
}

#[test]
fn a_node_below_its_share_renews_sooner_and_one_above_gives_back_at_once() {
    let mut node = FleetNode::new(shape());
    let (_, applied) = renewed(&mut node, 0.0, None, &reply(), grant(20.0, 50.0));
    let below = local(applied.lease, 0.0, None);
    assert_eq!(
        node.renewal_due_at(secs(0.5), &below),
        secs(3.0),
        "lease / 10"
    );
    let (_, applied) = renewed(&mut node, 3.0, applied.lease, &reply(), grant(100.0, 50.0));
    let above = local(applied.lease, 30.0, None);
    assert_eq!(
        node.renewal_due_at(secs(3.5), &above),
        secs(13.0),
        "nothing to gain: regular"
    );
    let lowered = node.share_to_give_back(secs(3.5), &above).unwrap();
    assert_eq!(lowered.grant_units, 50.0, "max(used 30, share 50)");
    let given = local(Some(lowered), 30.0, None);
    assert_eq!(node.share_to_give_back(secs(3.5), &given), None);
    assert_eq!(
        node.renewal_due_at(secs(3.5), &given),
        secs(5.5),
        "lease / 12 after the last"
    );
    let busy = local(applied.lease, 99.8, None);
    assert_eq!(
        node.share_to_give_back(secs(3.5), &busy),
        None,
        "using all of it: nothing to give back"
    );
}

#[test]
fn a_hold_ends_for_this_node_a_lease_times_1_03_plus_two_seconds_after_it_first_saw_it() {
    let mut node = FleetNode::new(shape());
    let held = FleetReply {
        held: true,
        ..reply()
    };
    let (_, first) = renewed(&mut node, 100.0, None, &held, grant(0.0, 50.0));
    // First seen at 100.01: the hold ends for this node at 100.01 + 30.9 + 2 = 132.91.
    let (_, again) = renewed(&mut node, 110.0, first.lease, &held, grant(0.0, 50.0));
    let early = local(again.lease, 0.0, Some(132.9));
    let (request, _) = node.renewal(secs(133.0), &early);
    assert_eq!(
        request.end_hold, None,
        "a refresh sent before 132.91 cannot end it"
    );
    assert_eq!(
        node.renewal_due_at(secs(133.0), &early),
        secs(120.0),
        "the regular renewal, lease / 3 after the one that was answered"
    );
    let late = local(again.lease, 0.0, Some(133.0));
    assert_eq!(
        node.renewal_due_at(secs(133.2), &late),
        secs(135.5),
        "133 + lease / 12"
    );
    let (request, _) = node.renewal(secs(135.5), &late);
    assert_eq!(request.end_hold.as_deref(), Some("e1"));
    // A new epoch (another loss) restarts the timer.
    let lost = FleetReply {
        held: true,
        epoch: "e2".into(),
        loss: true,
        ..reply()
    };
    let applied = node.apply_renewal(&request, &lost, &grant(0.0, 50.0), secs(135.6), 0.5);
    assert!(applied.events.contains(&FleetEvent::StateLost));
    let (request, _) = node.renewal(secs(140.0), &local(None, 0.0, Some(139.0)));
    assert_eq!(request.end_hold, None, "e2 is held until 168.5");
    assert!(node.status(secs(140.0), None).growth_held);
}

#[test]
fn charges_settle_only_with_a_refresh_sent_after_the_answer_that_listed_them() {
    let mut node = FleetNode::new(shape());
    let charged = FleetReply {
        charges_through: 7,
        charged_units: 40.0,
        ..reply()
    };
    let (_, first) = renewed(&mut node, 10.0, None, &charged, grant(20.0, 20.0));
    // Listed at 10.01: a refresh sent at 10.0 cannot settle them, one sent at 10.5 can.
    let (request, _) = node.renewal(secs(11.0), &local(first.lease, 0.0, Some(10.0)));
    assert_eq!(request.settle_through, 0);
    let (request, _) = node.renewal(secs(12.0), &local(first.lease, 0.0, Some(10.5)));
    assert_eq!(request.settle_through, 7);
    // Charges listed in another epoch never settle with this one's numbers.
    let other = FleetReply {
        epoch: "e2".into(),
        charges_through: 9,
        ..charged
    };
    node.apply_renewal(&request, &other, &grant(20.0, 20.0), secs(12.01), 0.5);
    let (request, _) = node.renewal(secs(13.0), &local(first.lease, 0.0, Some(12.005)));
    assert_eq!(
        request.settle_through, 0,
        "the only answer before the refresh is e1's"
    );
    let (request, _) = node.renewal(secs(14.0), &local(first.lease, 0.0, Some(12.5)));
    assert_eq!(request.settle_through, 9);
}

/// A report ends leases in Redis only when its state was seen maxSplitSeconds + leaseSeconds ×
/// 1.03 + 2 s ago (the fleet's 30 s leases, no split: 32.9 s), so a node reports the newest
/// answer that old.
#[test]
fn a_renewal_reports_the_newest_state_it_saw_a_sweeps_age_ago() {
    let mut node = FleetNode::new(shape());
    let at = |version| FleetReply { version, ..reply() };
    let (_, first) = renewed(&mut node, 10.0, None, &at(3), grant(20.0, 20.0));
    let (_, second) = renewed(&mut node, 20.0, first.lease, &at(8), grant(20.0, 20.0));
    let (request, _) = node.renewal(secs(42.9), &local(second.lease, 0.0, None));
    assert_eq!(
        request.seen, None,
        "version 3 was received at 10.01: not 32.9 s ago"
    );
    let (request, _) = node.renewal(secs(42.92), &local(second.lease, 0.0, None));
    let seen = request.seen.unwrap();
    assert_eq!(
        (seen.fleet_id.as_str(), seen.epoch.as_str(), seen.version),
        ("f1", "e1", 3)
    );
    assert_eq!(seen.age, secs(42.92).saturating_sub(secs(10.01)));
    let (request, _) = node.renewal(secs(55.0), &local(second.lease, 0.0, None));
    let seen = request.seen.unwrap();
    assert_eq!(
        (seen.version, seen.age),
        (8, secs(55.0 - 20.01)),
        "the newest old enough"
    );
}

/// With splits of up to 12 s adopted from the fleet, the report waits 12 s longer.
#[test]
fn the_fleets_max_split_lengthens_the_sweeps_age() {
    let mut node = FleetNode::new(shape());
    let split = FleetReply {
        fleet_max_split_ms: 12_000,
        ..reply()
    };
    let (_, first) = renewed(&mut node, 10.0, None, &split, grant(20.0, 20.0));
    let (request, _) = node.renewal(secs(54.9), &local(first.lease, 0.0, None));
    assert_eq!(request.seen, None, "received at 10.01: not 44.9 s ago");
    let (request, _) = node.renewal(secs(54.92), &local(first.lease, 0.0, None));
    assert_eq!(request.seen.map(|seen| seen.version), Some(1));
}

#[test]
fn the_fleets_shape_is_adopted_its_lease_and_floor_and_the_hold_follow_the_longest() {
    let mut node = FleetNode::new(shape()); // own: reserve 0.25, maxNodes 4, 30 s
    let fleet = FleetReply {
        fleet_reserve: 0.5,
        fleet_max_nodes: 2,
        fleet_lease_ms: 60_000,
        ..reply()
    };
    let (request, applied) = renewed(&mut node, 10.0, None, &fleet, grant(20.0, 20.0));
    assert_eq!(
        applied.lease.unwrap().deadline,
        lease_deadline(request.sent_at, Duration::from_secs(60)),
        "the fleet's lease"
    );
    assert_eq!(
        applied.floor_units, 12.5,
        "min(own 12.5, the fleet's 200 × 0.5 / 2 = 50)"
    );
    assert!(matches!(
        applied.events.as_slice(),
        [FleetEvent::Adopted { .. }]
    ));
    let status = node.status(secs(11.0), applied.lease);
    assert_eq!(
        (status.settings.max_nodes, status.configured.max_nodes),
        (2, 4)
    );
    assert_eq!(
        node.renewal_due_at(secs(11.0), &local(applied.lease, 0.0, None)),
        secs(30.0),
        "renewals every 60 s / 3"
    );
    // The state is lost and created anew by a node with 10 s leases: this node's hold lasts
    // the longest lease it knew.
    let lost = FleetReply {
        held: true,
        loss: true,
        epoch: "e2".into(),
        fleet_lease_ms: 10_000,
        ..reply()
    };
    let (_, applied) = renewed(&mut node, 30.0, applied.lease, &lost, grant(20.0, 20.0));
    assert!(applied.events.contains(&FleetEvent::StateLost));
    let (request, _) = node.renewal(secs(93.0), &local(None, 0.0, Some(92.0)));
    assert_eq!(
        request.end_hold, None,
        "held until 30.01 + 61.8 + 2 = 93.81"
    );
    let (request, _) = node.renewal(secs(95.0), &local(None, 0.0, Some(94.0)));
    assert_eq!(request.end_hold.as_deref(), Some("e2"));
}

/// A hold lasts maxSplitSeconds + leaseSeconds × 1.03 + 2 s: every lease an old primary went on
/// renewing during a split of up to maxSplitSeconds has lapsed by then. The longest split the
/// node ever ran with counts, as the longest lease does.
#[test]
fn a_hold_lasts_the_longest_split_and_lease_the_node_knew() {
    let mut node = FleetNode::new(shape()); // own: 30 s leases, no split
    let split = FleetReply {
        fleet_max_split_ms: 12_000,
        ..reply()
    };
    let (_, applied) = renewed(&mut node, 10.0, None, &split, grant(20.0, 20.0));
    // Lost, and created anew by a node that allows no split: the 12 s still count.
    let lost = FleetReply {
        held: true,
        loss: true,
        epoch: "e2".into(),
        ..reply()
    };
    renewed(&mut node, 20.0, applied.lease, &lost, grant(20.0, 20.0));
    let (request, _) = node.renewal(secs(65.0), &local(None, 0.0, Some(64.9)));
    assert_eq!(
        request.end_hold, None,
        "held until 20.01 + 12 + 30.9 + 2 = 64.91"
    );
    let (request, _) = node.renewal(secs(66.0), &local(None, 0.0, Some(64.95)));
    assert_eq!(request.end_hold.as_deref(), Some("e2"));
}

#[test]
fn a_node_beyond_max_nodes_has_no_floor_and_is_told_once_per_episode() {
    let mut node = FleetNode::new(shape());
    assert_eq!(node.floor_units(), 12.5, "its own until Redis answers");
    let crowded = FleetReply {
        live_nodes: 6,
        ..reply()
    };
    let beyond = Grant {
        slot: false,
        ..grant(10.0, 10.0)
    };
    let (_, applied) = renewed(&mut node, 0.0, None, &crowded, beyond);
    assert_eq!(applied.floor_units, 0.0);
    assert_eq!(
        applied.events,
        [FleetEvent::OverMaxNodes {
            live: 6,
            max_nodes: 4
        }]
    );
    assert!(node.status(secs(1.0), applied.lease).beyond_max_nodes);
    let (_, applied) = renewed(&mut node, 10.0, applied.lease, &crowded, beyond);
    assert!(applied.events.is_empty(), "the same episode");
    let (_, applied) = renewed(&mut node, 20.0, applied.lease, &reply(), grant(10.0, 10.0));
    assert!(applied.events.is_empty());
    assert_eq!(applied.floor_units, 12.5);
    let (_, applied) = renewed(&mut node, 30.0, applied.lease, &crowded, beyond);
    assert_eq!(applied.events.len(), 1, "a new episode");
}

#[test]
fn failures_back_off_and_the_logger_hears_each_change_of_kind_once() {
    let mut node = FleetNode::new(shape());
    let empty = local(None, 0.0, None);
    let events = node.call_failed(secs(1.0), ErrorKind::Connect, 1.0);
    assert_eq!(events, [FleetEvent::RedisError(Some(ErrorKind::Connect))]);
    assert_eq!(
        node.renewal_due_at(secs(1.0), &empty),
        secs(1.2),
        "100 ms doubled once"
    );
    assert!(node
        .call_failed(secs(1.2), ErrorKind::Connect, 1.0)
        .is_empty());
    assert_eq!(node.renewal_due_at(secs(1.2), &empty), secs(1.6));
    for _ in 0..10 {
        node.call_failed(secs(2.0), ErrorKind::Connect, 1.0);
    }
    assert_eq!(
        node.renewal_due_at(secs(2.0), &empty),
        secs(7.0),
        "at most 5 s"
    );
    let events = node.call_failed(secs(3.0), ErrorKind::Auth, 0.0);
    assert_eq!(events, [FleetEvent::RedisError(Some(ErrorKind::Auth))]);
    assert_eq!(
        node.renewal_due_at(secs(3.0), &empty),
        secs(5.5),
        "jitter: half of 5 s"
    );
    let status = node.status(secs(3.0), None);
    assert_eq!(status.redis_error, Some(ErrorKind::Auth));
    assert_eq!(status.errors[ErrorKind::Connect.index()], 12);
    let (_, applied) = renewed(&mut node, 6.0, None, &reply(), grant(20.0, 20.0));
    assert_eq!(applied.events, [FleetEvent::RedisError(None)]);
    assert_eq!(node.status(secs(6.0), None).redis_error, None);
}

#[test]
fn the_read_out_follows_the_answers_and_the_deadline() {
    let mut node = FleetNode::new(shape());
    let status = node.status(secs(0.0), None);
    assert_eq!(
        (status.mode, status.live_nodes, status.growth_held),
        (Mode::Connecting, None, true)
    );
    assert_eq!((status.floor_units, status.settings.max_nodes), (12.5, 4));
    let (_, applied) = renewed(&mut node, 0.0, None, &reply(), grant(40.0, 40.0));
    let lease = applied.lease;
    let status = node.status(secs(10.0), lease);
    assert_eq!(
        (status.mode, status.grant_units, status.node_budget_units),
        (Mode::Leased, 40.0, 52.5)
    );
    assert_eq!(status.lease_remaining, secs(28.1 - 10.0));
    assert_eq!(
        (status.live_nodes, status.charged_units, status.growth_held),
        (Some(2), Some(0.0), false)
    );
    let status = node.status(secs(28.1), lease);
    assert_eq!(
        (status.mode, status.grant_units, status.lease_remaining),
        (Mode::Floor, 0.0, Duration::ZERO)
    );
}

#[test]
fn a_node_that_never_called_has_nothing_to_release() {
    let mut node = FleetNode::new(shape());
    assert_eq!(node.release(secs(1.0), &local(None, 0.0, None)), None);
    let (_, applied) = renewed(&mut node, 1.0, None, &reply(), grant(40.0, 40.0));
    let release = node
        .release(secs(2.0), &local(applied.lease, 25.0, None))
        .unwrap();
    assert_eq!((release.seq, release.used_units), (2, 25.0));
    assert_eq!(release.known.fleet_id, "f1");
}

/// During a hold Redis grants a node its keep, which may count units it used beyond what it
/// holds (from a grant that lapsed): reserved, so no other node is lent them, but not room to
/// spend again. The node uses at most what it held when it sent the renewal.
#[test]
fn a_keep_of_spent_units_is_reserved_but_never_room_to_spend_during_a_hold() {
    let mut node = FleetNode::new(shape());
    let (_, first) = renewed(&mut node, 10.0, None, &reply(), grant(60.0, 60.0));
    let lapsed = first.lease.unwrap().deadline + Duration::from_secs(1);
    // 60 of the grant spent before it lapsed; the node renews after its deadline: it holds 0.
    let (request, _) = node.renewal(lapsed, &local(first.lease, 60.0, None));
    assert_eq!((request.keep, request.held_units), (60.0, 0.0));
    let held = FleetReply {
        held: true,
        loss: true,
        epoch: "e2".into(),
        ..reply()
    };
    let applied = node.apply_renewal(&request, &held, &grant(60.0, 60.0), lapsed, 0.5);
    assert_eq!(
        applied.lease.map(|lease| lease.grant_units),
        Some(0.0),
        "Redis keeps 60 for it; it may spend none of them again"
    );
    // Once the hold is over, a grant is room to spend again.
    let (request, _) = node.renewal(lapsed + secs(1.0), &local(applied.lease, 60.0, None));
    let applied = node.apply_renewal(&request, &reply(), &grant(60.0, 60.0), lapsed, 0.5);
    assert_eq!(applied.lease.map(|lease| lease.grant_units), Some(60.0));
}

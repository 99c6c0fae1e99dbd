// The story the demo plays: five phases, each setting what the fake authority does.
// Every start is a multiple of 0.5 s, so a phase begins exactly on a sample tick.
//
// Why these lengths (seed window w = 5 s, refreshes every 1.5–2.5 s, each bounded by 2 s):
// - silent must outlast w with room to spare: the last answered refresh was sent up to 2.5 s
//   before the silence, so the cutoff comes 2.5–5 s into it; the fast story keeps 6.5 s.
// - back, revoked and restored each take effect at the node's next refresh, at most 2.5 s in
//   (the authority resets the connections it held when it comes back, so no refresh is left
//   waiting on its 2 s timeout); the fast story gives each 3–3.5 s.
// - healthy lasts at least one refresh interval, so the silence follows a refresh in the story.

const AUTHORITY_SAYS = {
  healthy: ['answering', 'the authority answers every refresh: both nodes are ready'],
  silent: ['silent', 'the authority stops answering (accepts, never replies): refreshes time out after 2 s → degraded; at evidence age 5 s → not_ready'],
  back: ['answering', 'the authority is back (it resets the connections it held): ready again at each node’s next refresh'],
  revoked: ['revoked', 'the credential is revoked (401): not_ready, invalid_credential, at each node’s next refresh'],
  restored: ['answering', 'the credential is restored: ready again at each node’s next refresh'],
};

const LENGTHS = {
  default: { healthy: 6, silent: 12, back: 6, revoked: 6, restored: 10 }, // 40 s
  fast: { healthy: 2.5, silent: 6.5, back: 3.5, revoked: 3, restored: 3 }, // 18.5 s
};

/** `[{ name, start, end, authority, note }]` in story order, times in seconds. */
export function storyPlan({ fast = false } = {}) {
  let start = 0;
  return Object.entries(LENGTHS[fast ? 'fast' : 'default']).map(([name, seconds]) => {
    const [authority, note] = AUTHORITY_SAYS[name];
    const phase = { name, start, end: start + seconds, authority, note };
    start = phase.end;
    return phase;
  });
}

export const storyLength = (plan) => plan.at(-1).end;

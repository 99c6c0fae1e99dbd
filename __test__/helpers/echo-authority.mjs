// A minimal local HTTP authority for the secrets suite and its child fixture. It answers with the
// configured status/body and, to tempt a leak, echoes the credential header it received in its body
// and in a response header. (The full fake authority for the HTTP adapter suite lives in
// fake-authority.mjs; this one is deliberately tiny.)
import { createServer } from 'node:http';

export async function startEchoAuthority({ capability = 'metered-api' } = {}) {
  let reply = { status: 200, body: { capabilities: [capability] } };
  const seen = [];
  const server = createServer((req, res) => {
    const presented = req.headers.authorization ?? '';
    seen.push(presented);
    const body = { ...reply.body, echo: presented };
    if (reply.status >= 400) body.error = `credential rejected: ${presented}`;
    res.writeHead(reply.status, {
      'content-type': 'application/json',
      'www-authenticate': `Bearer error="invalid_token", token="${presented}"`,
    });
    res.end(JSON.stringify(body));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}/v1/account`,
    /** Every credential header value received so far. */
    seen,
    /** Answer future requests with this status and JSON body. */
    reply(status, body = {}) {
      reply = { status, body };
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

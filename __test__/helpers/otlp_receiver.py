"""A minimal OTLP/HTTP metrics receiver for opentelemetry-export.spec.mjs.

Listens on 127.0.0.1 (a free port, printed first as `port N`), decodes each POST to /v1/metrics
with the opentelemetry-proto package (the protobuf messages of the OpenTelemetry project itself),
answers an empty ExportMetricsServiceResponse, and prints the request as one line of JSON
(`google.protobuf.json_format.MessageToDict`). Nothing here is ours but the plumbing.
"""
import gzip
import json
from http.server import BaseHTTPRequestHandler, HTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def body(self):
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                chunk = self.rfile.read(size)
                self.rfile.readline()
                if size == 0:
                    break
                chunks.append(chunk)
            data = b"".join(chunks)
        else:
            data = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.headers.get("content-encoding") == "gzip":
            data = gzip.decompress(data)
        return data

    def do_POST(self):
        body = self.body()
        if self.path != "/v1/metrics" or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(400)
            self.end_headers()
            return
        request = metrics_service_pb2.ExportMetricsServiceRequest()
        request.ParseFromString(body)
        answer = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
        print(json.dumps(MessageToDict(request)), flush=True)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
print(f"port {server.server_address[1]}", flush=True)
server.serve_forever()

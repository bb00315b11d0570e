// Docker HEALTHCHECK without curl: HEAD <base>/is_file_cloud on the local port.
// Exit 0 when File Cloud answers 200 within 4 s, else 1 (liveness, not readiness).
import http from 'node:http';

const port = Number(process.env.FILE_CLOUD_PORT || 8000);
const base = (process.env.FILE_CLOUD_BASE_PATH || '').replace(/\/+$/, '');
const req = http.request({ host: '127.0.0.1', port, path: `${base}/is_file_cloud`, method: 'HEAD', timeout: 4000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', () => process.exit(1));
req.end();

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSshPublicKey } from './ssh-public-key.js';

// Lines made by ssh-keygen (OpenSSH 9.2); the fingerprints are what `ssh-keygen -lf` printed for them.
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIX+g68hDpyhUSBw49X2BG0Ry2Fh0vFg5x4HchQiKlhl a@b';
const ECDSA = 'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBBaBos4WZLHVEHGX42Tt1zON1gS2Ng9I1hEUmChSYKMRjKsbEzp2vTo1WdxXnOOg6zKsmU5WdzK0QEAnQuvYj6I= root@vm';
const RSA_2048 = 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC2TAx5l7HglQdNiDCgACfWKD3PPLdEUD/O3x2OxWypACLjqYhEGaDXmHFykpdxXyvSFcXV1W+MOKEZOAY5fB/3tjSJTTaTCTh+/475PNeh7adsm+uHAu3S0FgFc8L9LMybIzJxRBmHxJj61+wc7TfNZLaNx0BqsDy56XkLO1084E/f8ecqTmEog0mut/n5LZcRMdfvKYk3UBNfslERGp1lHudjnM4Ww4GS3tUkViQP3qy9ZyMNIUle4kWXBHoBvGrCUFx68DszUqG5IxT2xj3mpwmyzdBsYHQ1mlb9KqkR5pZXZCGAH4YbGOzcnvXmariU2bOSUXCQqc24v7Gf620B root@vm';
const RSA_1024 = 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQCwWI43kl9deD7E9QEYvzTixh5H7+3hZ9J2PbV7HV3subi6B/EDF1wx2gLw+hnlGlu8idqBuFVornB8MknHiAOsPqGW76fGRnngF0+HzYt/jNa9JPbnTzkqybEZbsO2WkgEADdQT5mUvupUNZTjAkPWXit8ibva89znxdHyGXPjiQ== root@vm';
const DSA = 'ssh-dss AAAAB3NzaC1kc3MAAACBAM+zGPxVh+Vk81xNuWpQkUjqPXRSFjcPqWeys4D2vP2B2Ff9DYUxSdz9FXSi/KmDVCYLBSpL+C4WnK2+0hHCyV/xmL9i3S5OLAMHfH4SQxeHFU+lWwsms7v8igwR5ReOwYnD242UwkPTZeZQ+IFSymxpsKKUAjBa+P+RvJk9AQpXAAAAFQC6DY7CXxLftOA/NrdoLZbB5dxAMQAAAIEAie9PXsYTRpKQfti7Qu4cAm4zRWS6Ho2F1xnuqMu8igyafiY88d78eshud00CJZnSo6f7jpOIsqjy42phLO2Kza38P7r/UntgQDMwXySRNTYUXcz2CkxD/OWnxSBBgpbc9U7VxzMZRHFyHftaPC/FDWwsaWbJ0eki+TwAOoBenDEAAACAeMvW4pcUSdCBrJ36+nh9/RQzUd48IsUCMal7ZHrLzYIRiHv/rOItnY1GJFbUhEWj1+gbd7vpt3qVxFv6sBgEtITUVN7zaG3bIA87Ge8qZS6Kjf3dI1gsPLS5vQedNQQlOcGpLfDmkhCj1LA9tKgaXSFoGqcej4fVUxkCZ+qXTbc= root@vm';

test('parseSshPublicKey accepts Ed25519, ECDSA and RSA of 2048 bits, with ssh-keygen\'s fingerprints', () => {
  const table: [string, string, string, string | undefined][] = [
    [ED25519, 'ssh-ed25519', 'SHA256:vPQU2kIgR2eleJG6fMA+w4stuAOwbKjHdJC//hr4gh8', 'a@b'],
    [ECDSA, 'ecdsa-sha2-nistp256', 'SHA256:VhpNtyE7RVE1m4Ua3rhgSebXT5kGoGFUrHqWrblppIY', 'root@vm'],
    [RSA_2048, 'ssh-rsa', 'SHA256:Ws3TXPjJAnPdfJo5RJZ/JwHwvOJrVVb0qpDr+5ghQ6w', 'root@vm'],
    [`  ${ED25519.split(' ').slice(0, 2).join(' ')}\t`, 'ssh-ed25519', 'SHA256:vPQU2kIgR2eleJG6fMA+w4stuAOwbKjHdJC//hr4gh8', undefined],
  ];
  for (const [line, algorithm, fingerprint, comment] of table) {
    const k = parseSshPublicKey(line);
    assert.deepEqual([k.algorithm, k.fingerprint, k.comment], [algorithm, fingerprint, comment], line.slice(0, 30));
    assert.equal(k.blob, line.trim().split(/\s+/)[1]);
  }
});

test('parseSshPublicKey refuses what is not one usable public key line, saying why', () => {
  const blob = Buffer.from('AAAAC3NzaC1lZDI1NTE5AAAAIIX+g68hDpyhUSBw49X2BG0Ry2Fh0vFg5x4HchQiKlhl', 'base64');
  const table: [string, RegExp][] = [
    ['', /empty/],
    [RSA_1024, /at least 2048 bits \(this one has 1024\)/],
    [DSA, /ssh-dss.*not accepted/],
    ['-----BEGIN OPENSSH PRIVATE KEY-----', /PEM form, or a private key/],
    [`${ED25519}\n${ED25519}`, /one line/],
    ['ssh-ed25519', /Expected/],
    ['ssh-ed25519 not*base64', /not base64/],
    // A blob whose own type is another than the line's.
    [`ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIIX+g68hDpyhUSBw49X2BG0Ry2Fh0vFg5x4HchQiKlhl`, /type does not match/],
    // Cut short, and with a byte too many.
    [`ssh-ed25519 ${blob.subarray(0, blob.length - 4).toString('base64')}`, /malformed/],
    [`ssh-ed25519 ${Buffer.concat([blob, Buffer.from([0, 0, 0, 0])]).toString('base64')}`, /malformed/],
    [`ssh-ed25519 ${'A'.repeat(9000)}`, /longer than/],
  ];
  for (const [line, why] of table) assert.throws(() => parseSshPublicKey(line), why, line.slice(0, 40));
});

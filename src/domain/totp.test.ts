import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base32Decode, base32Encode, formatRecoveryCode, hotp, matchTotp, normalizeRecoveryCode, otpauthUrl, timeStep, totp } from './totp.js';

const RFC_SECRET = Buffer.from('12345678901234567890', 'ascii');

test('HOTP matches RFC 4226 Appendix D', () => {
  const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  expected.forEach((code, counter) => assert.equal(hotp(RFC_SECRET, counter), code, `counter ${counter}`));
});

test('TOTP matches RFC 6238 Appendix B (SHA-1, 8 digits)', () => {
  const vectors: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];
  for (const [seconds, code] of vectors) assert.equal(totp(RFC_SECRET, seconds * 1000, 8), code, `T=${seconds}`);
});

test('6-digit TOTP is the last six digits of the 8-digit value', () => {
  assert.equal(totp(RFC_SECRET, 59_000), '287082');
  assert.equal(totp(RFC_SECRET, 1111111109_000), '081804');
});

test('matchTotp accepts steps -1, 0, +1 and refuses ±2, returning the step matched', () => {
  const now = 1_700_000_000_000;
  const step = timeStep(now);
  const codeAt = (s: number) => hotp(RFC_SECRET, s);
  const table: [number, number | undefined][] = [
    [-2, undefined],
    [-1, step - 1],
    [0, step],
    [1, step + 1],
    [2, undefined],
  ];
  for (const [delta, want] of table) assert.equal(matchTotp(RFC_SECRET, codeAt(step + delta), now), want, `delta ${delta}`);
});

test('matchTotp refuses malformed codes', () => {
  const now = 1_700_000_000_000;
  const good = totp(RFC_SECRET, now);
  for (const bad of ['', '12345', '1234567', ` ${good}`, `${good.slice(0, 5)}x`, '٠١٢٣٤٥']) assert.equal(matchTotp(RFC_SECRET, bad, now), undefined, JSON.stringify(bad));
});

test('base32 round-trips and matches RFC 4648 test vectors (unpadded)', () => {
  const vectors: [string, string][] = [['', ''], ['f', 'MY'], ['fo', 'MZXQ'], ['foo', 'MZXW6'], ['foob', 'MZXW6YQ'], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI']];
  for (const [plain, encoded] of vectors) {
    assert.equal(base32Encode(Buffer.from(plain)), encoded);
    assert.equal(base32Decode(encoded)?.toString(), plain);
    assert.equal(base32Decode(`${encoded.toLowerCase()}==`)?.toString(), plain);
  }
  assert.equal(base32Decode('ABC1'), undefined, '1 is not base32');
  const random = Buffer.from('00ff10ef7a5c3b2d9e8f01020304050607080910', 'hex');
  assert.deepEqual(base32Decode(base32Encode(random)), random);
});

test('otpauth URL carries issuer, account and secret', () => {
  const url = new URL(otpauthUrl({ issuer: 'File Cloud', account: 'alice', secret: 'JBSWY3DPEHPK3PXP' }));
  assert.equal(url.protocol, 'otpauth:');
  assert.equal(url.host, 'totp');
  assert.equal(decodeURIComponent(url.pathname), '/File Cloud:alice');
  assert.equal(url.searchParams.get('secret'), 'JBSWY3DPEHPK3PXP');
  assert.equal(url.searchParams.get('issuer'), 'File Cloud');
  assert.equal(url.searchParams.get('digits'), '6');
  assert.equal(url.searchParams.get('period'), '30');
});

test('recovery codes: formatted in groups, normalized from what a user types', () => {
  const code = formatRecoveryCode(Buffer.alloc(10, 0xab));
  assert.match(code, /^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
  assert.equal(normalizeRecoveryCode(code), code.replace(/-/g, ''));
  assert.equal(normalizeRecoveryCode(` ${code.toLowerCase().replace(/-/g, ' ')} `), code.replace(/-/g, ''));
  for (const bad of ['', '123456', 'ABCD-EFGH-IJKL', 'ABCD-EFGH-IJKL-MNO1']) assert.equal(normalizeRecoveryCode(bad), undefined, bad);
});

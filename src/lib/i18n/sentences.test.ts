import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IntlMessageFormat } from 'intl-messageformat';
import { CATALOGS, type MessageKey } from './catalogs.js';
import { localizePart, localizeSentence, sentence, type SentenceKey } from './sentences.js';
import { translator } from './translate.js';
import { nameProblem } from '../../domain/names.js';

const de = translator('de');
const en = translator('en');

type Node = { type: number; value: string };
const argumentsOf = (key: MessageKey): string[] => (new IntlMessageFormat(CATALOGS.en[key], 'en').getAst() as unknown as Node[]).filter((n) => n.type === 1).map((n) => n.value);
const keys = (prefix: string) => (Object.keys(CATALOGS.en) as MessageKey[]).filter((k): k is SentenceKey => k.startsWith(prefix));

test('every API sentence, written in English by the server, comes back word for word in German, its arguments kept', () => {
  const sentences = keys('apiDetail.');
  assert.ok(sentences.length > 50, `${sentences.length} sentences`);
  for (const key of sentences) {
    // Arguments that look like data: a name with spaces and quotes, a number.
    const values = Object.fromEntries(argumentsOf(key).map((name, i) => [name, i % 2 ? String(1000 + i) : `Mein „Ordner“ ${i}`]));
    const english = sentence(key, values);
    assert.equal(localizeSentence(english, de), de(key, values), key);
    assert.equal(localizeSentence(english, en), english, `${key} in English is itself`);
  }
});

test('a piece inside a sentence is worded too: a name\'s problem in a path, the account-name rule', () => {
  const problem = nameProblem('a\\b');
  assert.equal(problem, 'a name cannot contain a backslash');
  const message = sentence('apiDetail.pathInvalid', { problem: problem ?? '' });
  assert.equal(message, 'The path is invalid: a name cannot contain a backslash.');
  assert.equal(localizeSentence(message, de), 'Der Pfad ist ungültig: ein Name darf keinen umgekehrten Schrägstrich („\\“) enthalten.');
  const tooLong = sentence('apiDetail.nameInvalid', { problem: nameProblem('x'.repeat(300)) ?? '' });
  assert.equal(localizeSentence(tooLong, de), 'Ungültiger Name: ein Name darf höchstens 255 Bytes lang sein.');
  const user = sentence('apiDetail.usernameInvalid', { name: '.x', rule: sentence('apiPart.accountNameRule') });
  assert.equal(localizeSentence(user, de), `Ungültiger Benutzername „.x“: erlaubt sind ${de('apiPart.accountNameRule')}.`);
});

test('the server\'s sentences read as before: numbers without grouping, data as given', () => {
  assert.equal(sentence('apiDetail.limitRange', { max: 10000 }), '"limit" must be a whole number from 1 to 10000.');
  assert.equal(sentence('apiDetail.shareWithSyntax', { placeholder: '<name>' }), 'Share with "user:<name>" or "group:<name>".');
  assert.equal(localizeSentence('Das ist kein Satz des Servers.', de), undefined);
  assert.equal(localizeSentence('The path is invalid.', de), undefined, 'a sentence must fit whole, not in part');
});

test('why single sign-on is unavailable, shown on the sign-in page, is worded; an unknown reason stays as it is', () => {
  assert.equal(localizePart(sentence('apiPart.ssoNotContacted'), de), 'noch nicht erreicht');
  assert.equal(localizePart(sentence('apiPart.ssoCannotUse', { issuer: 'https://idp.example', why: 'fetch failed' }), de), 'der Anbieter unter https://idp.example kann nicht genutzt werden: fetch failed');
  assert.equal(localizePart('something else', de), 'something else');
});

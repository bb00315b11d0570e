import { browserLocale, LANGUAGE_NAMES, languageSetting, LOCALES, setLanguage, t, type Locale } from '../lib/i18n';
import { BASE } from '../lib/base';
import { SectionHead } from './SectionHead';

/** The UI's language: the browser's (the default) or one chosen here, kept in this browser. */
export function LanguageSection() {
  const choice = languageSetting();
  return (
    <section className="settings-section" aria-labelledby="language-title">
      <SectionHead id="language-title" icon="text" title={t('settings.languageTitle')} help={t('settings.languageHelp')} />
      <label className="field">
        <span>{t('settings.languageLabel')}</span>
        <select value={choice} onChange={(e) => setLanguage(e.target.value as Locale | 'auto', `${BASE}/`)}>
          <option value="auto">{t('settings.languageAuto', { language: LANGUAGE_NAMES[browserLocale()] })}</option>
          {LOCALES.map((l) => (
            <option key={l} value={l} lang={l}>
              {LANGUAGE_NAMES[l]}
            </option>
          ))}
        </select>
      </label>
    </section>
  );
}

import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { ApiClient } from './api/client';
import { applyDocumentLanguage, locale, onLanguageChange } from './lib/i18n';
import './styles.css';
import './account.css';

const client = new ApiClient();

/** The app drawn anew in the chosen language when the setting changes (every string and format is read at render). */
function Root() {
  const [language, setLanguage] = useState(locale);
  useEffect(() => onLanguageChange(() => setLanguage(locale())), []);
  return <App key={language} client={client} />;
}

applyDocumentLanguage();
createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { ApiClient } from './api/client';
import './styles.css';
import './account.css';

const client = new ApiClient();
createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <App client={client} />
  </StrictMode>,
);

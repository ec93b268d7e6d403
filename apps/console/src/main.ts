import { bootstrapApplication } from '@angular/platform-browser';
import { appConfig } from './app/app.config';
import { App } from './app/app';

bootstrapApplication(App, appConfig)
  // the app did not start: the browser console is the only place left to report it
  // eslint-disable-next-line no-console
  .catch((err) => console.error(err));

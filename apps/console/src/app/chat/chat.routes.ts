import type { Routes } from '@angular/router';

import { ChatPage } from './chat-page/chat-page';

export const CHAT_ROUTES: Routes = [{ path: '', component: ChatPage }];

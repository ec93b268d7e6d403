import { HttpClient, provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { firstValueFrom } from 'rxjs';

import { apiErrorInterceptor } from './api-error.interceptor';
import { apiTokenInterceptor, ApiToken } from './api-token';
import { isSignedOutResponse, SignIn, signInInterceptor } from './sign-in';

describe('SignIn', () => {
  let http: HttpTestingController;
  let signIn: SignIn;

  beforeEach(() => {
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(withInterceptors([apiTokenInterceptor, apiErrorInterceptor, signInInterceptor])),
        provideHttpClientTesting(),
      ],
    });
    http = TestBed.inject(HttpTestingController);
    signIn = TestBed.inject(SignIn);
  });

  afterEach(() => http.verify());

  it('only a 401 of an /api call (not of the sign-in link) means signed out', () => {
    expect(isSignedOutResponse('/api/sessions', 401)).toBe(true);
    expect(isSignedOutResponse('/api/sessions', 403)).toBe(false);
    expect(isSignedOutResponse('/api/auth/login?code=x', 401)).toBe(false);
    expect(isSignedOutResponse('https://elsewhere.example/api', 401)).toBe(false);
  });

  it('Scenario: a 401 of any console call shows the sign-in screen', async () => {
    expect(signIn.signedOut()).toBe(false);
    const call = firstValueFrom(TestBed.inject(HttpClient).get('/api/sessions')).catch((error: unknown) => error);
    http.expectOne('/api/sessions').flush({ status: 401, detail: 'Authentication required' }, { status: 401, statusText: 'Unauthorized' });
    expect(await call).toMatchObject({ status: 401 });
    expect(signIn.signedOut()).toBe(true);
    // a later successful check clears it
    const check = signIn.check();
    http.expectOne('/api/auth/session').flush({ signed_in: true, via: 'cookie' });
    expect(await check).toBe('signed-in');
    expect(signIn.signedOut()).toBe(false);
  });

  it('a pasted token the server refuses is not kept', async () => {
    const token = TestBed.inject(ApiToken);
    const used = signIn.useToken('wrong-token-0123456789');
    const request = http.expectOne('/api/auth/session');
    expect(request.request.headers.get('Authorization')).toBe('Bearer wrong-token-0123456789');
    request.flush({ status: 401 }, { status: 401, statusText: 'Unauthorized' });
    expect(await used).toBe(false);
    expect(token.token()).toBeNull();
    expect(signIn.signedOut()).toBe(true);
  });
});

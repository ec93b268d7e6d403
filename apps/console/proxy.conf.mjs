// Angular dev server (`ng serve`, `npm run dev`): REST calls go to the API server on CASHCODE_PORT (default 8000).
// The WebSocket gateway is reached directly (its port comes from GET /api/client-config); the API trusts the dev
// server's origin only when it runs with CASHCODE_CONSOLE_DEV=1, which `npm run dev` sets.
const port = process.env.CASHCODE_PORT?.trim() || '8000';

export default {
  '/api': { target: `http://127.0.0.1:${port}`, secure: false, changeOrigin: false },
};

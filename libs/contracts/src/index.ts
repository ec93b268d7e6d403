export * from './ws';
export * from './rest';
export * from './metadata';
export * from './mcp';
export * from './memory';
export * from './skills';
export * from './evolution';
export * from './approvals';

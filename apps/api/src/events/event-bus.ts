/**
 * The typed publish/subscribe helpers over Nest's EventEmitter2 (`@nestjs/event-emitter`, set up by
 * EventEmitterModule.forRoot in the root module). Names and payloads come from the AppEvents map.
 */
import { Global, Injectable, Module } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import type { AppEventName, AppEvents } from './app-events';

@Injectable()
export class AppEventBus {
  constructor(private readonly emitter: EventEmitter2) {}

  /** Publishes synchronously: a listener that throws synchronously throws here. */
  emit<K extends AppEventName>(name: K, payload: AppEvents[K]): void {
    this.emitter.emit(name, payload);
  }

  /** Subscribes a listener; returns the function that unsubscribes it. */
  on<K extends AppEventName>(name: K, listener: (payload: AppEvents[K]) => unknown): () => void {
    this.emitter.on(name, listener);
    return () => {
      this.emitter.off(name, listener);
    };
  }
}

/** Marks a provider method as the listener of an event; its parameter must accept the event's payload. */
export function OnAppEvent<K extends AppEventName>(name: K) {
  const decorator = OnEvent(name);
  return <M extends (payload: AppEvents[K]) => unknown>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): void => {
    decorator(target, key, descriptor);
  };
}

/** Provides AppEventBus to every module (global). */
@Global()
@Module({ providers: [AppEventBus], exports: [AppEventBus] })
export class EventsModule {}

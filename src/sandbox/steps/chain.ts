/**
 * How the request steps compose, as Hono's middlewares do: each step gets the request's context
 * and `next`, can answer early, add to the context for the steps after it, or change the answer
 * that `next` gives back.
 */
import type { SandboxAnswer } from '../answer.js';

/** The rest of the chain, from the step after this one. */
export type Next<C> = (context: C) => Promise<SandboxAnswer>;

/** One step: answers from `context`, usually by calling `next` with the context it has grown. */
export type Step<In, Out = In> = (context: In, next: Next<Out>) => Promise<SandboxAnswer>;

/** Steps in the order they run, from a context of type `In` to the `C` the next step gets. */
export class Chain<In, C> {
  readonly #run: (context: In, last: Next<C>) => Promise<SandboxAnswer>;

  constructor(run: (context: In, last: Next<C>) => Promise<SandboxAnswer>) {
    this.#run = run;
  }

  /** Adds a step after those already in the chain. */
  use<Out>(step: Step<C, Out>): Chain<In, Out> {
    return new Chain<In, Out>((context, last) => this.#run(context, (grown) => step(grown, last)));
  }

  /** Closes the chain with what answers once every step has run. */
  end(last: Next<C>): Next<In> {
    return (context) => this.#run(context, last);
  }
}

/** An empty chain, to add steps to. */
export function chain<C>(): Chain<C, C> {
  return new Chain<C, C>((context, last) => last(context));
}

// Apart from the playbook schema, which loads the whole DSL (YAML, the template parser): the CLI
// checks a step name it sends without loading them.

/** The longest step name: the API names steps in paths and bodies (a retry's from_step, a batch item, GET …/steps/{step}) up to this. */
export const MAX_STEP_NAME_CHARS = 256;

import * as v from 'valibot';

/** The document versions this service reads. */
export const API_VERSIONS = ['svc/v1'] as const;

/** A document's `apiVersion`: one this service knows (DESIGN.md "Authoring"), for every kind the catalog takes. */
export const ApiVersionSchema = v.picklist(API_VERSIONS, (issue) => `unknown apiVersion ${issue.received}: this service knows ${API_VERSIONS.join(', ')}`);

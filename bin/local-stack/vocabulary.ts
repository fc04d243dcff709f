/**
 * The demo catalog's vocabulary is data: `demo-vocabulary.json` beside this file (topics with their
 * products, purposes, keywords and tool nouns; publishers; languages and licenses with their
 * weights; probe words), read by the generator (`synthetic.ts`). This module checks the file's
 * shape once, at load, and gives it its types. The word lists are exported so tests can search for
 * words they know are there.
 */
import * as z from 'zod';
import { CATEGORIES, type Category } from '../../lambdas/catalog-core';
import data from './demo-vocabulary.json';

const words = z.array(z.string().min(1)).min(1);
const category = z.enum(CATEGORIES);
/** `[item, weight]` pairs, drawn in proportion to the weights. */
const weighted = <T extends z.ZodType>(item: T) => z.array(z.tuple([item, z.number().nonnegative()])).min(1);

const TopicSchema = z.object({
  /** Token used in server names and package identifiers ([a-z0-9-]). */
  key: z.string().regex(/^[a-z0-9-]+$/),
  /** Display name of the integrated product or domain. */
  label: z.string().min(1),
  category,
  /** Plausible secondary categories. */
  related: z.array(category),
  /** Verb phrases for descriptions ("query PostgreSQL databases"). */
  purposes: words,
  /** Domain words used in READMEs and tool descriptions. */
  keywords: words,
  /** Things the tools act on (snake_case). */
  nouns: words,
  /** The environment variable a package needs. */
  env: z.object({ name: z.string().min(1), description: z.string().min(1), secret: z.boolean() }).optional(),
});

const VocabularySchema = z.strictObject({
  topics: z.array(TopicSchema).min(1),
  /** Words that appear only in READMEs (never in names, descriptions or tools): README search probes. */
  readmeOnlyWords: words,
  /** Words that appear only in tool descriptions: tool-text search probes. */
  toolOnlyWords: words,
  userHandles: words,
  /** Appended to a handle (`''` for none). */
  userSuffixes: z.array(z.string()).min(1),
  companyNames: words,
  companyTlds: weighted(z.string().min(1)),
  nameAdjectives: words,
  languages: words,
  languageByRegistry: z.record(z.string(), weighted(z.string().min(1))),
  /** GitHub license name and SPDX id; `null` = a repository without a license. */
  licenses: weighted(z.object({ name: z.string().min(1), spdx: z.string().min(1) }).nullable()),
  remoteHosts: words,
});

export type Topic = Readonly<z.infer<typeof TopicSchema>> & { readonly category: Category; readonly related: readonly Category[] };
export type Vocabulary = z.infer<typeof VocabularySchema>;

/** The file, checked: a malformed entry fails the first import with the path of the entry. */
export function checkedVocabulary(input: unknown): Vocabulary {
  const parsed = VocabularySchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`demo-vocabulary.json: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

const vocabulary = checkedVocabulary(data);

export const TOPICS: readonly Topic[] = vocabulary.topics;
export const README_ONLY_WORDS: readonly string[] = vocabulary.readmeOnlyWords;
export const TOOL_ONLY_WORDS: readonly string[] = vocabulary.toolOnlyWords;
export const USER_HANDLES: readonly string[] = vocabulary.userHandles;
export const USER_SUFFIXES: readonly string[] = vocabulary.userSuffixes;
export const COMPANY_NAMES: readonly string[] = vocabulary.companyNames;
export const COMPANY_TLDS: ReadonlyArray<readonly [string, number]> = vocabulary.companyTlds;
export const NAME_ADJECTIVES: readonly string[] = vocabulary.nameAdjectives;
export const LANGUAGES: readonly string[] = vocabulary.languages;
export const LANGUAGE_BY_REGISTRY: Readonly<Record<string, ReadonlyArray<readonly [string, number]>>> = vocabulary.languageByRegistry;
export const LICENSES: ReadonlyArray<readonly [{ name: string; spdx: string } | null, number]> = vocabulary.licenses;
export const REMOTE_HOSTS: readonly string[] = vocabulary.remoteHosts;

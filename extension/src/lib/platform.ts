// What an adapter reports about a post, per platform, and the
// registerObservedVersion input built from it (CONTRACT.md,
// "registerObservedVersion input").

import type { ImageOccurrence } from "./hash";

export const PLATFORMS = ["LESSWRONG", "X", "SUBSTACK", "WIKIPEDIA", "BLUESKY", "THREADS"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** The platforms whose pages show many posts, each with its own Fact-check button (a verdict, no inline investigation). */
export type FeedPlatform = "BLUESKY" | "THREADS";
export const FEED_PLATFORMS: readonly FeedPlatform[] = ["BLUESKY", "THREADS"];

export type MediaState = "text_only" | "has_images" | "has_video";

export interface LessWrongMetadata {
  slug: string;
  title?: string;
  /** The browser's re-serialized post body; the server derives text from it when it cannot fetch its own copy. */
  htmlContent: string;
  authorName?: string;
  authorSlug: string | null;
  tags: string[];
  publishedAt?: string;
}

export interface XMetadata {
  authorHandle: string;
  authorDisplayName: string | null;
  text: string;
  mediaUrls: string[];
  likeCount?: number;
  retweetCount?: number;
  postedAt?: string;
}

export interface SubstackMetadata {
  substackPostId: string;
  publicationSubdomain: string;
  slug: string;
  title: string;
  subtitle?: string;
  htmlContent?: string;
  authorName: string;
  authorSubstackHandle?: string;
  publishedAt?: string;
  likeCount?: number;
  commentCount?: number;
}

export interface WikipediaMetadata {
  language: string;
  /** The page name with underscores, e.g. Albert_Einstein. */
  title: string;
  pageId: string;
  revisionId: string;
  displayTitle?: string;
  lastModifiedAt?: string;
  htmlContent?: string;
}

/**
 * BLUESKY: the externalId is the post's AT URI under the author's DID
 * (at://{did}/app.bsky.feed.post/{rkey}); the text is observedContentText.
 */
export interface BlueskyMetadata {
  /** The author's handle (e.g. alice.bsky.social), lowercased. */
  handle: string;
  displayName?: string;
  /** When the post was made (ISO-8601 UTC), when the page shows it exactly. */
  createdAt?: string;
  likeCount?: number;
  repostCount?: number;
  replyCount?: number;
}

/** THREADS: the externalId is the post code (threads.com/@{username}/post/{code}). */
export interface ThreadsMetadata {
  /** The author's username, without the @, lowercased. */
  username: string;
  displayName?: string;
  postedAt?: string;
  likeCount?: number;
  replyCount?: number;
  repostCount?: number;
}

interface ContentBase {
  /**
   * The post's id on its platform. For Wikipedia it is "{lang}:{pageId}",
   * kept for the extension's own bookkeeping; the server derives it and it is
   * not sent.
   */
  externalId: string;
  url: string;
  /** Client-observed normalized text. */
  contentText: string;
  mediaState: MediaState;
  imageUrls: string[];
  imageOccurrences: ImageOccurrence[];
}

export type PlatformContent =
  | (ContentBase & { platform: "LESSWRONG"; metadata: LessWrongMetadata })
  | (ContentBase & { platform: "X"; metadata: XMetadata })
  | (ContentBase & { platform: "SUBSTACK"; metadata: SubstackMetadata })
  | (ContentBase & { platform: "WIKIPEDIA"; metadata: WikipediaMetadata })
  | (ContentBase & { platform: "BLUESKY"; metadata: BlueskyMetadata })
  | (ContentBase & { platform: "THREADS"; metadata: ThreadsMetadata });

interface RegisterBase {
  url: string;
  observedImageUrls: string[];
  observedImageOccurrences: ImageOccurrence[];
}

export type RegisterObservedVersionInput =
  | (RegisterBase & { platform: "LESSWRONG"; externalId: string; metadata: LessWrongMetadata })
  | (RegisterBase & { platform: "X"; externalId: string; observedContentText: string; metadata: XMetadata })
  | (RegisterBase & {
      platform: "SUBSTACK";
      externalId: string;
      observedContentText: string;
      metadata: SubstackMetadata;
    })
  | (RegisterBase & { platform: "WIKIPEDIA"; observedContentText: string; metadata: WikipediaMetadata })
  | (RegisterBase & { platform: "BLUESKY"; externalId: string; observedContentText: string; metadata: BlueskyMetadata })
  | (RegisterBase & { platform: "THREADS"; externalId: string; observedContentText: string; metadata: ThreadsMetadata });

/** Only this much HTML (UTF-8 bytes) rides along as Wikipedia's/Substack's optional htmlContent. */
export const MAX_OPTIONAL_HTML_BYTES = 256 * 1024;

/**
 * The registerObservedVersion input for observed content, field for field as
 * the contract lists it: LessWrong sends its HTML and no text; Wikipedia sends
 * no externalId; empty arrays are sent as [].
 */
export function buildRegisterInput(content: PlatformContent): RegisterObservedVersionInput {
  const base: RegisterBase = {
    url: content.url,
    observedImageUrls: [...content.imageUrls],
    observedImageOccurrences: content.imageOccurrences.map((o) => ({ ...o })),
  };
  switch (content.platform) {
    case "LESSWRONG":
      return { platform: "LESSWRONG", externalId: content.externalId, ...base, metadata: content.metadata };
    case "X":
      return {
        platform: "X",
        externalId: content.externalId,
        ...base,
        observedContentText: content.contentText,
        metadata: content.metadata,
      };
    case "SUBSTACK":
      return {
        platform: "SUBSTACK",
        externalId: content.externalId,
        ...base,
        observedContentText: content.contentText,
        metadata: content.metadata,
      };
    case "WIKIPEDIA":
      return { platform: "WIKIPEDIA", ...base, observedContentText: content.contentText, metadata: content.metadata };
    case "BLUESKY":
      return {
        platform: "BLUESKY",
        externalId: content.externalId,
        ...base,
        observedContentText: content.contentText,
        metadata: content.metadata,
      };
    case "THREADS":
      return {
        platform: "THREADS",
        externalId: content.externalId,
        ...base,
        observedContentText: content.contentText,
        metadata: content.metadata,
      };
  }
}

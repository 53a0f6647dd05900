// Page shells for the saved post bodies (the same container LessWrong renders).

export function lesswrongPostPage(bodyHtml: string, postUrl: string, title = "Did Claude 3 Opus align itself via gradient hacking?"): string {
  const jsonLd = JSON.stringify({ "@context": "http://schema.org", "@type": "Article", url: postUrl, datePublished: "2025-08-24T17:00:00.000Z" });
  return `<!doctype html><html><head><title>${title} — LessWrong</title><script type="application/ld+json">${jsonLd}</script></head>
<body><div id="postBody">
  <h1 class="PostsPageTitle-root"><a href="/posts/x">${title}</a></h1>
  <div class="PostsAuthors-authorName"><a href="/users/fiora-starlight">Fiora Starlight</a></div>
  <div class="PostsPage-postContent instapaper_body"><div id="postContent" class="ContentItemBody-root">${bodyHtml}</div></div>
</div></body></html>`;
}

// Agent text is untrusted: it is Markdown that may carry HTML (`<img src=x onerror=…>`, `<script>`, javascript:
// links). marked turns it into HTML, DOMPurify removes everything that could run script, and the page's CSP
// (script-src 'self', no inline) is the second wall. Tool output never goes through here: it is set as text.
import "/vendor/marked.js";  // a UMD build: it defines globalThis.marked
import DOMPurify from "/vendor/purify.js";
import "/vendor/highlight.js";  // highlight.js 9 (Debian's libjs-highlight.js): it defines globalThis.hljs

const marked = globalThis.marked;
const hljs = globalThis.hljs;
// Code blocks that name their language are highlighted (tokens become <span class="hljs-…">, which DOMPurify
// keeps); guessing the language of an unnamed block is left out, since a streaming message is drawn again on
// every frame and guessing tries every grammar.
const highlight = (code, language) => {
  if (!language || !hljs.getLanguage(language)) return code;
  try {
    return hljs.highlight(language, code, true).value;
  } catch {
    return code;
  }
};
marked.setOptions({ gfm: true, breaks: false, mangle: false, headerIds: false, highlight });

// HTML written into the Markdown is shown as the text it is, never parsed as markup. DOMPurify would remove
// its handlers, but only after parsing it in a document of this page, where each `onerror=` or `onload=` makes
// the browser report a Content-Security-Policy violation; escaped here, nothing is parsed and nothing reported.
const escapeHtml = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
// An image would be fetched from wherever the agent's text points (the CSP blocks any other origin, and reports
// it): it is shown as a link to the image instead, which loads nothing until followed.
marked.use({ renderer: {
  html: (html) => escapeHtml(html),
  image: (href, title, text) => `<a href="${escapeHtml(href || "")}">${escapeHtml(text || href || "image")}</a>`,
} });

// Links open in a new tab without handing it this page (no opener, no referrer).
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

const kPurify = {
  FORBID_TAGS: ["style", "svg", "math", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
  ALLOW_DATA_ATTR: false,
};

export function renderMarkdown(element, text) {
  element.innerHTML = DOMPurify.sanitize(marked.parse(text), kPurify);
}

// Agent text is untrusted: it is Markdown that may carry HTML (`<img src=x onerror=…>`, `<script>`, javascript:
// links). marked turns it into HTML, DOMPurify removes everything that could run script, and the page's CSP
// (script-src 'self', no inline) is the second wall. Tool output never goes through here: it is set as text.
import "/vendor/marked.js";  // a UMD build: it defines globalThis.marked
import DOMPurify from "/vendor/purify.js";

const marked = globalThis.marked;
marked.setOptions({ gfm: true, breaks: false, mangle: false, headerIds: false });

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

/** GitHub's anchor of a Markdown heading, as the docs' links and the tests that check them compute it. */
export const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

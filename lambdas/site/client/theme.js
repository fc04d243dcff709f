// Runs before the first paint (a blocking script in <head>): applies the theme the reader chose
// on an earlier visit, so a dark page never flashes light. Without a choice, the stylesheet
// follows the system's preference.
(() => {
  try {
    const theme = localStorage.getItem('mcp-theme');
    if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  } catch {
    // Storage refused (private mode, blocked cookies): the system preference applies.
  }
})();

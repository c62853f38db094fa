"""The app's own CSS: status lines, the typing indicator, the reveal, a worker's chatbot, pinned table
columns, and narrow screens.

Gradio 6 takes CSS at launch (`serve.launch_app` passes it), not when the
Blocks are built.
"""

APP_CSS = """
.prose.status-line p { margin: 0.2rem 0; }
.typing-indicator { font-style: italic; opacity: 0.7; animation: arena-typing 1.2s ease-in-out infinite; }
@keyframes arena-typing { 0%, 100% { opacity: 0.3; } 50% { opacity: 1; } }
.prose.battle-reveal { border-left: 4px solid var(--color-accent); padding-left: 0.6rem; }
/* A study worker's chatbot: no Clear button (Gradio shows it always; it would only blank the view, not the
   stored conversation). Its top panel holds nothing else with `WORKER_CHATBOT_BUTTONS`. */
.worker-chat .icon-button-wrapper.top-panel { display: none !important; }
#leaderboard-table th, #leaderboard-table td { white-space: nowrap; }
/* A table marked `pinned-columns` keeps its first two columns (rank and system) in view while the rest
   scrolls sideways; `pinned-one` keeps only the first. Gradio 6 reads its own `pinned_columns` but does not
   pin anything. The second column's offset is the first one's width, which the page script measures
   (`webapp.ui.parts.page_script`). The cells get an opaque background so the columns scrolling beneath
   them do not show through. */
.pinned-columns th[data-testid="header-0"], .pinned-columns .body-cell[data-col="0"],
.pinned-columns:not(.pinned-one) th[data-testid="header-1"],
.pinned-columns:not(.pinned-one) .body-cell[data-col="1"] { position: sticky !important; z-index: 3; }
.pinned-columns th[data-testid="header-0"], .pinned-columns .body-cell[data-col="0"] { left: 0; }
.pinned-columns:not(.pinned-one) th[data-testid="header-1"],
.pinned-columns:not(.pinned-one) .body-cell[data-col="1"] { left: var(--pinned-left, 3.5rem); }
.pinned-columns .body-cell[data-col="0"], .pinned-columns .body-cell[data-col="1"] { background: inherit; }
.pinned-columns.pinned-one th[data-testid="header-0"], .pinned-columns.pinned-one .body-cell[data-col="0"],
.pinned-columns:not(.pinned-one) th[data-testid="header-1"],
.pinned-columns:not(.pinned-one) .body-cell[data-col="1"] {
  box-shadow: inset -1px 0 0 var(--border-color-primary), 4px 0 4px -2px rgba(0, 0, 0, 0.12);
}
/* The per-reply rating opens from a flag icon, which reads as "report": it says what it does. */
.extra-feedback > button { width: auto !important; padding: 0 4px !important; gap: 4px; }
.extra-feedback > button::after { content: "Rate this reply"; font-size: var(--text-sm); white-space: nowrap; }
@media (max-width: 640px) {
  .gradio-container { padding-left: 6px !important; padding-right: 6px !important; }
}
"""

import { useState, type ReactNode } from 'react';

/**
 * A secret with line breaks (a PEM key, a .creds file, JSON holding tokens): a textarea masked like
 * a password input (CSS `masked`) until its Show toggle, a button named `Show <name>`, is pressed.
 * Mounted anew (a new React key), it is masked again.
 */
export function MaskedTextarea({
  id,
  name,
  label,
  title,
  ariaLabel,
  rows,
  value,
  onChange,
  placeholder,
}: {
  id: string;
  name: string;
  label: ReactNode;
  title?: string;
  ariaLabel?: string;
  rows: number;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
}) {
  const [shown, setShown] = useState(false);
  return (
    <div className="multiline-secret">
      <label title={title}>
        {label}
        <textarea
          id={id}
          aria-label={ariaLabel}
          rows={rows}
          className={shown ? 'code' : 'code masked'}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          placeholder={placeholder}
          spellCheck={false}
          autoComplete="off"
          autoCapitalize="off"
          autoCorrect="off"
        />
      </label>
      <button type="button" aria-label={`Show ${name}`} aria-pressed={shown} aria-controls={id} onClick={() => setShown(!shown)}>
        Show
      </button>
    </div>
  );
}

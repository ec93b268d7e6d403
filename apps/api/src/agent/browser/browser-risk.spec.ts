import { assessAction, hostAllowed } from './browser-risk';
import { emptyRefIndex, type RefIndex } from './browser-snapshot';

function refs(): RefIndex {
  const index = emptyRefIndex();
  index.labels.set('e3', 'button "Send"');
  index.labels.set('e2', 'textbox "Query"');
  index.labels.set('e1', 'link "Next"');
  index.formSubmit.add('e3');
  index.formField.add('e2');
  return index;
}

describe('browser actions that ask the owner', () => {
  const page = { url: 'https://shop.example.com/cart', refs: refs(), focusInForm: false };

  it('Scenario: reading and navigating never ask', () => {
    for (const action of ['navigate', 'snapshot', 'screenshot', 'scroll', 'back', 'tabs', 'close']) {
      expect(assessAction({ action, ref: 'e3' }, page, ['other.org'])).toBeNull();
    }
  });

  it('Scenario: a click on a form button asks with the element and the page', () => {
    expect(assessAction({ action: 'click', ref: 'e3' }, page, [])).toEqual({
      action: 'click',
      url: 'https://shop.example.com/cart',
      reason: 'form_submit',
      element: 'button "Send" [e3]',
    });
    expect(assessAction({ action: 'click', ref: 'e1' }, page, [])).toBeNull();
  });

  it('Scenario: typing asks only when it submits; Enter asks when the focus is in a form', () => {
    expect(assessAction({ action: 'type', ref: 'e2', text: 'cats' }, page, [])).toBeNull();
    expect(assessAction({ action: 'type', ref: 'e2', text: 'cats', submit: true }, page, [])).toMatchObject({ reason: 'form_submit', text: 'cats' });
    expect(assessAction({ action: 'press', key: 'Enter' }, page, [])).toBeNull();
    expect(assessAction({ action: 'press', key: 'Enter' }, { ...page, focusInForm: true }, [])).toMatchObject({ action: 'press', text: 'Enter' });
    expect(assessAction({ action: 'press', key: 'Escape' }, { ...page, focusInForm: true }, [])).toBeNull();
  });

  it('Scenario: any interaction outside the allowed domains asks', () => {
    expect(assessAction({ action: 'click', ref: 'e1' }, page, ['example.com'])).toBeNull();
    expect(assessAction({ action: 'click', ref: 'e1' }, page, ['example.org'])).toMatchObject({ reason: 'outside_allowed_domains' });
    expect(assessAction({ action: 'select', ref: 'e1', values: ['a', 'b'] }, page, ['example.org'])).toMatchObject({ text: 'a, b' });
  });

  it('a chat without an open page has nothing to judge', () => {
    expect(assessAction({ action: 'click', ref: 'e3' }, null, ['example.org'])).toBeNull();
  });

  it('domains cover their subdomains only', () => {
    expect(hostAllowed('a.example.com', ['example.com'])).toBe(true);
    expect(hostAllowed('example.com.', ['example.com'])).toBe(true);
    expect(hostAllowed('badexample.com', ['example.com'])).toBe(false);
  });
});

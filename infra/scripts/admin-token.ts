/** `npm run admin-token`: prints a fresh local admin bearer token (HS256 with ADMIN_JWT_SECRET, valid 12 h). */
import { issueLocalAdminToken } from '../../lib/auth/admin-token';
import { config } from '../../lib/config';

console.log(await issueLocalAdminToken(config));
